/* Telling text from bytes (utf8.c): what notices and the syslog and
 * terminal summaries show of names users chose. */
#include "config.h"

#include "testutil.h"
#include "utf8.h"

static void expect(const char *raw, size_t len, const char *shown)
{
    char out[256];
    size_t n = utf8_escape(raw, len, out, sizeof(out));
    assert_string_equal(out, shown);
    assert_int_equal(n, strlen(shown));
}

#define EXPECT(raw, shown) expect(raw, sizeof(raw) - 1, shown)

static void test_every_acting_class_is_escaped(void **state)
{
    (void)state;
    EXPECT("\x01\x1b[2J\n\t\r", "\\x01\\x1b[2J\\x0a\\x09\\x0d"); /* C0 controls */
    EXPECT("a\0b", "a\\x00b");                                   /* NUL */
    EXPECT("\x7f", "\\x7f");                                     /* DEL */
    EXPECT("\xc2\x80\xc2\x9b\xc2\x9f", "\\xc2\\x80\\xc2\\x9b\\xc2\\x9f"); /* C1, both ends */
    EXPECT("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xe2\x80\xae",
           "\\xe2\\x80\\xaa\\xe2\\x80\\xab\\xe2\\x80\\xac\\xe2\\x80\\xad\\xe2\\x80\\xae");
    EXPECT("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9",
           "\\xe2\\x81\\xa6\\xe2\\x81\\xa7\\xe2\\x81\\xa8\\xe2\\x81\\xa9"); /* isolates */
    EXPECT("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", "\\xe2\\x80\\x8e\\xe2\\x80\\x8f\\xd8\\x9c"); /* marks */
    /* Not UTF-8: a lone continuation byte, a cut sequence, an overlong
     * slash, a surrogate, past U+10FFFF. */
    EXPECT("\x80", "\\x80");
    EXPECT("a\xe2\x80", "a\\xe2\\x80");
    EXPECT("\xc0\xaf", "\\xc0\\xaf");
    EXPECT("\xed\xa0\x80", "\\xed\\xa0\\x80");
    EXPECT("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
}

static void test_text_is_shown_as_it_is(void **state)
{
    (void)state;
    /* The neighbours of every escaped range are text. */
    EXPECT("r\xc3\xa9sum\xc3\xa9 \xc2\xa0 ~", "r\xc3\xa9sum\xc3\xa9 \xc2\xa0 ~");
    EXPECT("\xe2\x80\x8d\xe2\x80\x90\xe2\x80\xa9\xe2\x80\xaf", "\xe2\x80\x8d\xe2\x80\x90\xe2\x80\xa9\xe2\x80\xaf");
    EXPECT("\xe2\x81\xa5\xe2\x81\xaa\xd8\x9b\xd8\x9d", "\xe2\x81\xa5\xe2\x81\xaa\xd8\x9b\xd8\x9d");
    EXPECT("\xf0\x9f\x98\x80 \\x41", "\xf0\x9f\x98\x80 \\x41");
}

static void test_cut_between_units(void **state)
{
    (void)state;
    char out[8];
    /* "ab" then an escape of four that does not fit in the rest. */
    assert_int_equal(utf8_escape("ab\x1b" "c", 4, out, 6), 2);
    assert_string_equal(out, "ab");
    /* An é is not cut in half. */
    assert_int_equal(utf8_escape("abcd\xc3\xa9", 6, out, 6), 4);
    assert_string_equal(out, "abcd");
    assert_int_equal(utf8_escape("abcd\xc3\xa9", 6, out, 7), 6);
    assert_string_equal(out, "abcd\xc3\xa9");
    assert_int_equal(utf8_escape("x", 1, out, 1), 0);
    assert_string_equal(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_acting_class_is_escaped),
        cmocka_unit_test(test_text_is_shown_as_it_is),
        cmocka_unit_test(test_cut_between_units),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
