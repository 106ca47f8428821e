/* A command line quoted for a notice (shell_quote_argv) must give the
 * same argv back when a shell reads it.  The unquoting here is a POSIX sh
 * reader for exactly the forms the quoter writes (shellquote.c):
 * words apart by single spaces, each made of
 *   bare bytes            [A-Za-z0-9_@+:,./-]
 *   '...'                 anything but "'" (newline included)
 *   "..."                 printable, without $ ` \ " !
 *   \'                    one "'"
 *   "$(printf '\NNN...')" bytes in octal, never a newline (which $()
 *                         would strip)
 * Anything else in the output is a failure, as is a byte that is neither
 * printable ASCII nor a newline inside single quotes. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "shellquote.h"
#include "strbuf.h"
#include "util.h"

static bool bare_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("_@+:,./-", c));
}

static bool printable(char c)
{
    return c >= 0x20 && c < 0x7f;
}

/* One word starting at *s into w; false when *s holds a form the quoter
 * never writes. */
static bool unquote_word(const char **s, struct strbuf *w)
{
    static const char printf_open[] = "\"$(printf '", printf_close[] = "')\"";
    const char *p = *s;
    bool any = false;
    while (*p && *p != ' ') {
        any = true;
        if (*p == '\'') {
            const char *close = strchr(p + 1, '\'');
            if (!close)
                return false;
            for (const char *q = p + 1; q < close; q++)
                if (!printable(*q) && *q != '\n')
                    return false;
            strbuf_add(w, p + 1, (size_t)(close - p - 1));
            p = close + 1;
        } else if (strncmp(p, printf_open, sizeof(printf_open) - 1) == 0) {
            p += sizeof(printf_open) - 1;
            size_t n = 0;
            for (; p[0] == '\\'; p += 4, n++) {
                if (p[1] < '0' || p[1] > '3' || p[2] < '0' || p[2] > '7' || p[3] < '0' ||
                    p[3] > '7')
                    return false;
                char c = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                if (c == '\n' || c == '\0')
                    return false;
                strbuf_addc(w, c);
            }
            if (n == 0 || strncmp(p, printf_close, sizeof(printf_close) - 1) != 0)
                return false;
            p += sizeof(printf_close) - 1;
        } else if (*p == '"') {
            const char *close = strchr(p + 1, '"');
            if (!close)
                return false;
            for (const char *q = p + 1; q < close; q++)
                if (!printable(*q) || strchr("$`\\!", *q))
                    return false;
            strbuf_add(w, p + 1, (size_t)(close - p - 1));
            p = close + 1;
        } else if (p[0] == '\\' && p[1] == '\'') {
            strbuf_addc(w, '\'');
            p += 2;
        } else if (bare_byte(*p)) {
            strbuf_addc(w, *p++);
        } else {
            return false;
        }
    }
    *s = p;
    return any;
}

/* The words of a quoted line, NUL-terminated each, as /proc/PID/cmdline
 * holds them; false when the line is not what the quoter writes. */
static bool unquote_line(const char *line, struct strbuf *argv)
{
    const char *p = line;
    while (*p) {
        struct strbuf w = {0};
        bool ok = unquote_word(&p, &w);
        strbuf_add(argv, w.s ? w.s : "", w.len);
        strbuf_addc(argv, '\0');
        strbuf_free(&w);
        if (!ok || (*p == ' ' && p[1] == '\0'))
            return false;
        if (*p == ' ')
            p++;
    }
    return true;
}

/* The argv as the quoter reads it: a final NUL ends the last word. */
static size_t argv_length(const uint8_t *data, size_t size)
{
    return size > 0 && data[size - 1] == '\0' ? size : size + (size > 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *cmdline = (const char *)data;
    bool elided = true;
    char *line = shell_quote_argv(cmdline, size, 0, &elided);
    FUZZ_CHECK(!elided);
    struct strbuf back = {0};
    FUZZ_CHECK(unquote_line(line, &back));
    /* Byte for byte, every word and its end. */
    size_t want = argv_length(data, size);
    FUZZ_CHECK(back.len == want);
    FUZZ_CHECK(size == 0 || memcmp(back.s, data, size) == 0);
    strbuf_free(&back);
    free(line);

    /* Cut to a length: whole leading words and a marker that no shell
     * runs. */
    size_t max = size > 0 ? (size_t)data[0] * 2 : 1;
    line = shell_quote_argv(cmdline, size, max, &elided);
    if (elided) {
        char *marker = strrchr(line, '<');
        FUZZ_CHECK(marker && strstr(marker, " not shown>") &&
                   strcmp(marker + strlen(marker) - 11, " not shown>") == 0);
        FUZZ_CHECK(strlen(line) <= max || marker == line);
    } else {
        FUZZ_CHECK(max == 0 || strlen(line) <= max);
    }
    free(line);

    /* One word, the whole input, NULs and all cut at the first. */
    size_t first = strnlen(cmdline, size);
    line = shell_quote_word(cmdline, first);
    struct strbuf word = {0};
    FUZZ_CHECK(unquote_line(line, &word));
    FUZZ_CHECK(word.len == first + 1 && memcmp(word.s, cmdline, first) == 0);
    strbuf_free(&word);
    free(line);
    return 0;
}
