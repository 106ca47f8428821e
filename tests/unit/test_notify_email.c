#include "config.h"

#include "notify/notify_email.h"
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

/* Not ASCII: RFC 2047 encoded words in base64, 42 bytes of the subject
 * a word at most, a line each. */
static void test_subject_encoded(void **state)
{
    (void)state;
    char *m = email_compose("a", "b", "caf\xc3\xa9 stopped", "", DATE);
    char *h = headers_of(m);
    assert_non_null(strstr(h, "Subject: =?UTF-8?B?Y2Fmw6kgc3RvcHBlZA==?=\n"));
    free(h);
    free(m);
    char subject[64] = "";
    for (int i = 0; i < 25; i++)
        strcat(subject, "\xc3\xa9");
    m = email_compose("a", "b", subject, "", DATE);
    h = headers_of(m);
    assert_non_null(strstr(h, "Subject: =?UTF-8?B?"
                              "w6nDqcOpw6nDqcOpw6nDqcOpw6nDqcOpw6nDqcOpw6nDqcOpw6nDqcOp?=\n"
                              " =?UTF-8?B?w6nDqcOpw6k=?=\n"));
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

/* With a chart: the same headers, multipart/mixed, the text part the
 * very body of the plain mail, the PNG in base64 lines of 76; a body
 * that holds the boundary the mail would use gets another. */
static void test_image_mail_keeps_the_text_part(void **state)
{
    (void)state;
    char taken[80];
    snprintf(taken, sizeof(taken), "=_loginguard_%lx_%x_0", (unsigned long)DATE,
             (unsigned)getpid());
    char body[256];
    snprintf(body, sizeof(body), "one\r\n.\nname: %s\n", taken);
    unsigned char png[100];
    for (size_t i = 0; i < sizeof(png); i++)
        png[i] = (unsigned char)i;
    char *plain = email_compose("root", "bob", "your program", body, DATE);
    char *m = email_compose_image("root", "bob", "your program", body, png, sizeof(png), DATE);
    char *plain_head = headers_of(plain), *head = headers_of(m);
    /* Headers alike but for the Content-Type (and the encoding, which
     * goes to the text part). */
    assert_memory_equal(plain_head, head, strstr(plain_head, "Content-Type") - plain_head);
    char boundary[96];
    snprintf(boundary, sizeof(boundary), "=_loginguard_%lx_%x_1", (unsigned long)DATE,
             (unsigned)getpid());
    char *want = NULL;
    assert_true(asprintf(&want, "Content-Type: multipart/mixed; boundary=\"%s\"\n", boundary) > 0);
    assert_non_null(strstr(head, want));
    free(want);
    /* The text part: from its blank line to the line end before the
     * next boundary, the plain mail's body exactly. */
    char *delim = NULL;
    assert_true(asprintf(&delim, "\n--%s\n", boundary) > 0);
    const char *first = strstr(m, delim);
    assert_non_null(first);
    const char *text = strstr(first, "\n\n") + 2;
    const char *second = strstr(text, delim);
    assert_non_null(second);
    const char *plain_body = strstr(plain, "\n\n") + 2;
    assert_int_equal((size_t)(second - text), strlen(plain_body));
    assert_memory_equal(text, plain_body, strlen(plain_body));
    assert_non_null(strstr(second, "Content-Type: image/png; name=\"usage.png\"\n"
                                   "Content-Transfer-Encoding: base64\n"
                                   "Content-Disposition: inline; filename=\"usage.png\"\n\n"
                                   "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKiss"
                                   "LS4vMDEyMzQ1Njc4\nOTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVW"
                                   "V1hZWltcXV5fYGFiYw==\n"));
    char *end = NULL;
    assert_true(asprintf(&end, "\n--%s--\n", boundary) > 0);
    assert_string_equal(m + strlen(m) - strlen(end), end);
    free(end);
    free(delim);
    free(plain_head);
    free(head);
    free(plain);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostile_names_make_no_header),
        cmocka_unit_test(test_body_cleaned),
        cmocka_unit_test(test_long_ascii_subject_folded),
        cmocka_unit_test(test_subject_encoded),
        cmocka_unit_test(test_addresses),
        cmocka_unit_test(test_image_mail_keeps_the_text_part),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
