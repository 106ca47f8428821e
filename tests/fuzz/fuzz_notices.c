/* A notice template as a site writes it (rules/notices/KIND.txt), then
 * rendered with hostile values: a process name or command line may hold
 * any byte, and what reaches a terminal or a mail header must not act
 * on it.
 *
 * Input: the template, then optionally a NUL and values separated by
 * NULs, given to the placeholders in their order (user, host, program,
 * command, ...).  The sbatch and salloc lines are quoted by
 * shell_quote_argv first, as notice_build.c does. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "notices.h"
#include "shellquote.h"
#include "utf8.h"
#include "util.h"

static bool is_safe_field(const char *name)
{
    return strcmp(name, "sbatch") == 0 || strcmp(name, "salloc") == 0;
}

/* Bytes that move a terminal: C0 controls and DEL (tab aside), the C1
 * controls in UTF-8, and the bidirectional overrides and isolates. */
static bool has_controls(const char *s, bool newline_ok)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; u[i]; i++) {
        if ((u[i] < 0x20 && u[i] != '\t' && !(newline_ok && u[i] == '\n')) || u[i] == 0x7f ||
            (u[i] == 0xc2 && u[i + 1] >= 0x80 && u[i + 1] < 0xa0))
            return true;
        if (u[i] == 0xe2 && u[i + 1] && ((u[i + 1] == 0x80 && u[i + 2] >= 0xaa && u[i + 2] <= 0xae) ||
                                         (u[i + 1] == 0x81 && u[i + 2] >= 0xa6 && u[i + 2] <= 0xa9)))
            return true;
    }
    return false;
}

/* The site's own text may hold anything (it is trusted); only a
 * template in valid UTF-8 without controls promises a notice without. */
static bool plain_text(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len = strlen(s);
    for (size_t i = 0, n; i < len; i += n)
        if ((n = utf8_sequence(u + i, len - i)) == 0)
            return false;
    return !has_controls(s, true);
}

static size_t placeholder_count(void)
{
    size_t n = 0;
    while (notice_placeholders[n])
        n++;
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, '\0', size);
    size_t tpl_len = nul ? (size_t)(nul - data) : size;
    char *path = fuzz_write("notices/throttled.txt", data, tpl_len);
    struct notice_templates t;
    memset(&t, 0, sizeof(t));
    struct errors errs = {0};
    int rc = notice_template_parse(&t.kinds[NOTICE_THROTTLED], path, &errs);
    FUZZ_CHECK((rc == 0) == (errs.count == 0));
    for (size_t i = 0; i < errs.count; i++)
        FUZZ_CHECK(strncmp(errs.messages[i], path, strlen(path)) == 0);

    struct notice_field fields[32];
    size_t count = 0;
    struct fuzz_pieces in = {nul ? nul + 1 : data + size, data + size};
    char *value;
    size_t len;
    while (count < sizeof(fields) / sizeof(fields[0]) && fuzz_next_piece(&in, &value, &len)) {
        const char *name = notice_placeholders[count % placeholder_count()];
        if (is_safe_field(name)) {
            char *quoted = shell_quote_argv(value, len, 0, NULL);
            free(value);
            value = quoted;
        }
        fields[count++] = (struct notice_field){name, value, is_safe_field(name)};
    }

    struct notice n;
    if (notice_render(&t, NOTICE_THROTTLED, fields, count, &n) == 0) {
        /* Whatever the values, a plain template gives a plain notice. */
        char *tpl = xstrndup((const char *)data, tpl_len);
        if (plain_text(tpl)) {
            FUZZ_CHECK(!has_controls(n.subject, false));
            FUZZ_CHECK(!has_controls(n.body, true));
        }
        free(tpl);
        notice_free(&n);
    } else {
        FUZZ_CHECK(rc < 0);
    }
    FUZZ_CHECK(notice_render(&t, NOTICE_WARNED, fields, count, &n) == -1);
    for (size_t i = 0; i < count; i++)
        free((char *)fields[i].value);
    notice_templates_free(&t);
    errors_free(&errs);
    free(path);
    return 0;
}
