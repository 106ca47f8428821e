#include "config.h"

#include "notify_email.h"
#include "testutil.h"

/* 2026-01-05 10:20:30 UTC, a Monday. */
#define DATE ((time_t)1767608430)

/* The header block: everything before the first empty line. */
static char *headers_of(const char *message)
{
    const char *end = strstr(message, "\n\n");
    assert_non_null(end);
    return strndup(message, (size_t)(end - message) + 1);
}

static int count_headers(const char *headers, const char *name)
{
    int n = 0;
    size_t len = strlen(name);
    for (const char *line = headers; *line; line = strchr(line, '\n') + 1)
        n += strncasecmp(line, name, len) == 0 && line[len] == ':';
    return n;
}

static void test_hostile_names_make_no_header(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    char *m = email_compose("loginguard <root@n1>\r\nBcc: a@evil", "bob@example.org\nCc: b@evil",
                            "your program x\r\nBcc: evil@example.org\x1b[2J was stopped",
                            "name: x\nBcc: evil@example.org\n", DATE);
    char *h = headers_of(m);
    assert_int_equal(count_headers(h, "Bcc"), 0);
    assert_int_equal(count_headers(h, "Cc"), 0);
    assert_int_equal(count_headers(h, "To"), 1);
    assert_non_null(strstr(h, "From: loginguard <root@n1>  Bcc: a@evil\n"));
    assert_non_null(strstr(h, "To: bob@example.org Cc: b@evil\n"));
    assert_non_null(strstr(h, "Subject: your program x  Bcc: evil@example.org [2J was stopped\n"));
    assert_non_null(strstr(h, "Date: Mon, 05 Jan 2026 10:20:30 +0000\n"));
    assert_non_null(strstr(h, "Auto-Submitted: auto-generated\n"));
    assert_non_null(strstr(h, "Content-Type: text/plain; charset=utf-8\n"));
    /* The body keeps the name as text. */
    assert_string_equal(strstr(m, "\n\n") + 2, "name: x\nBcc: evil@example.org\n");
    free(h);
    free(m);
}

static void test_body_cleaned(void **state)
{
    (void)state;
    char *m = email_compose("a", "b", "s", "one\r\n.\r\ntwo\x07\tend\x1b", DATE);
    assert_string_equal(strstr(m, "\n\n") + 2, "one\n. \ntwo\tend\n");
    free(m);
}

static void test_long_ascii_subject_folded(void **state)
{
    (void)state;
    char subject[400] = "";
    for (int i = 0; i < 30; i++)
        strcat(subject, "word1234 ");
    char *m = email_compose("a", "b", subject, "", DATE);
    char *h = headers_of(m);
    const char *s = strstr(h, "Subject: ");
    const char *end = strstr(s, "\nDate:");
    int lines = 0;
    for (const char *line = s; line < end; line = strchr(line, '\n') + 1) {
        assert_true(strchr(line, '\n') - line <= 78);
        if (line != s)
            assert_int_equal(line[0], ' ');
        lines++;
    }
    /* Cut to 200 bytes: 22 whole words and a part, over 3 lines. */
    assert_int_equal(lines, 3);
    free(h);
    free(m);
}

static void test_addresses(void **state)
{
    (void)state;
    char *a = email_address("alice", "example.org");
    assert_string_equal(a, "alice@example.org");
    free(a);
    a = email_address("alice", "");
    assert_string_equal(a, "alice");
    free(a);
    a = email_address("alice", NULL);
    assert_string_equal(a, "alice");
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostile_names_make_no_header),
        cmocka_unit_test(test_body_cleaned),
        cmocka_unit_test(test_long_ascii_subject_folded),
        cmocka_unit_test(test_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
