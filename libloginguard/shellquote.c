#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "shellquote.h"
#include "strbuf.h"
#include "util.h"

/* Bytes that mean nothing to sh, bash or zsh anywhere in a word.  Not '='
 * (a first word "a=b" would be an assignment), '%' (job control in an
 * interactive shell), '~', '#', '^', '!' or any glob or brace character. */
static bool plain_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           strchr("_@+:,./-", c) != NULL;
}

static bool printable(unsigned char c)
{
    return c >= 0x20 && c < 0x7f;
}

/* A program named "if" or "done" must not become shell syntax when it is
 * the first word of a --wrap command. */
static bool reserved_word(const char *s, size_t len)
{
    static const char *const words[] = {
        "case", "do", "done", "elif", "else", "esac", "fi", "for", "if", "in", "then",
        "until", "while", "function", "select", "time", "coproc", "foreach", "end",
        "repeat", "nocorrect", "noglob", NULL,
    };
    for (const char *const *w = words; *w; w++)
        if (strlen(*w) == len && memcmp(*w, s, len) == 0)
            return true;
    return false;
}

/* What the simplest quoting for a word can be. */
enum form { BARE, SINGLE, DOUBLE, MIXED };

static enum form word_form(const char *s, size_t len)
{
    bool bare = len > 0 && !reserved_word(s, len), single = true, dbl = true;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        bare = bare && plain_byte(c);
        if (c == '\'' || (c != '\n' && !printable(c)))
            single = false;
        /* '!' is history expansion inside double quotes in bash and zsh. */
        if (!printable(c) || strchr("$`\\\"!", c))
            dbl = false;
    }
    if (bare)
        return BARE;
    if (single)
        return SINGLE;
    return dbl ? DOUBLE : MIXED;
}

/* Length of the run at s that one kind of piece takes. */
static size_t quotable_run(const unsigned char *s, size_t left)
{
    size_t n = 0;
    while (n < left && s[n] != '\'' && (printable(s[n]) || s[n] == '\n'))
        n++;
    return n;
}

static size_t raw_run(const unsigned char *s, size_t left)
{
    size_t n = 0;
    while (n < left && s[n] != '\n' && !printable(s[n]))
        n++;
    return n;
}

/* Printable runs (and newlines) in single quotes, each "'" as \', and
 * every other byte through printf's octal escapes: dash has no $'...', and
 * a newline never goes through $(...), which would strip it at the end. */
static void add_mixed(struct strbuf *b, const unsigned char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        size_t n;
        if (s[i] == '\'') {
            strbuf_adds(b, "\\'");
            i++;
        } else if ((n = quotable_run(s + i, len - i)) > 0) {
            strbuf_addc(b, '\'');
            strbuf_add(b, (const char *)s + i, n);
            strbuf_addc(b, '\'');
            i += n;
        } else {
            n = raw_run(s + i, len - i);
            strbuf_adds(b, "\"$(printf '");
            for (size_t j = 0; j < n; j++)
                strbuf_addf(b, "\\%03o", s[i + j]);
            strbuf_adds(b, "')\"");
            i += n;
        }
    }
}

static void add_word(struct strbuf *b, const char *s, size_t len)
{
    switch (word_form(s, len)) {
    case BARE:
        strbuf_add(b, s, len);
        break;
    case SINGLE:
        strbuf_addc(b, '\'');
        strbuf_add(b, s, len);
        strbuf_addc(b, '\'');
        break;
    case DOUBLE:
        strbuf_addc(b, '"');
        strbuf_add(b, s, len);
        strbuf_addc(b, '"');
        break;
    case MIXED:
        add_mixed(b, (const unsigned char *)s, len);
        break;
    }
}

char *shell_quote_word(const char *s, size_t len)
{
    struct strbuf b = {0};
    add_word(&b, s, len);
    return strbuf_take(&b);
}

/* The quoted words of a NUL-separated argv; a final NUL ends the last
 * word rather than starting an empty one. */
static char **quote_words(const char *cmdline, size_t len, size_t *count)
{
    char **words = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < len;) {
        size_t w = strnlen(cmdline + i, len - i);
        words = grow_array(words, n, &cap, sizeof(*words));
        words[n++] = shell_quote_word(cmdline + i, w);
        i += w + 1;
    }
    *count = n;
    return words;
}

static char *elision(size_t left)
{
    return xasprintf("<%zu more argument%s not shown>", left, left == 1 ? "" : "s");
}

/* How many leading words fit into max together with the marker. */
static size_t words_that_fit(char **words, size_t count, size_t max)
{
    size_t used = 0, k = 0;
    for (; k < count; k++) {
        char *marker = elision(count - k - 1);
        size_t need = used + strlen(words[k]) + 1 + strlen(marker);
        free(marker);
        if (need > max)
            break;
        used += strlen(words[k]) + 1;
    }
    return k;
}

char *shell_quote_argv(const char *cmdline, size_t len, size_t max, bool *elided)
{
    size_t count, total = 0;
    char **words = quote_words(cmdline, len, &count);
    for (size_t i = 0; i < count; i++)
        total += strlen(words[i]) + (i > 0);
    size_t keep = max == 0 || total <= max ? count : words_that_fit(words, count, max);

    struct strbuf b = {0};
    for (size_t i = 0; i < keep; i++) {
        strbuf_adds(&b, words[i]);
        if (i + 1 < keep)
            strbuf_addc(&b, ' ');
    }
    if (keep < count) {
        char *marker = elision(count - keep);
        if (keep > 0)
            strbuf_addc(&b, ' ');
        strbuf_adds(&b, marker);
        free(marker);
    }
    if (elided)
        *elided = keep < count;
    for (size_t i = 0; i < count; i++)
        free(words[i]);
    free(words);
    return strbuf_take(&b);
}
