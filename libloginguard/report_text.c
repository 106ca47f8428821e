#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_format.h"
#include "utf8.h"
#include "util.h"

char *report_shown(const char *s)
{
    size_t len = strlen(s);
    char *out = xmalloc(4 * len + 1);
    utf8_escape(s, len, out, 4 * len + 1);
    return out;
}

void report_heading(const struct report *r, struct strbuf *out)
{
    char from[64], to[64];
    report_time(r->since ? r->since : r->first, false, from, sizeof(from));
    report_time(r->until, false, to, sizeof(to));
    strbuf_addf(out, "loginguard report from %s to %s (local time): %llu event%s", from, to,
                (unsigned long long)r->events, r->events == 1 ? "" : "s");
}

/* Characters a terminal shows for s (escaped text: ASCII and whole
 * UTF-8 sequences). */
static size_t width_of(const char *s)
{
    size_t chars = 0;
    for (; *s; s++)
        chars += ((unsigned char)*s & 0xc0) != 0x80;
    return chars;
}

static void pad(struct strbuf *out, size_t n)
{
    for (; n > 0; n--)
        strbuf_addc(out, ' ');
}

static void table(const struct report_table *t, struct strbuf *out)
{
    strbuf_addf(out, "\n%s\n", t->title);
    if (!t->rows) {
        strbuf_adds(out, "  (none)\n");
        return;
    }
    size_t n = (t->rows + 1) * t->cols;
    char **shown = xcalloc(n, sizeof(*shown));
    size_t *width = xcalloc(t->cols, sizeof(*width));
    for (size_t i = 0; i < n; i++) {
        size_t col = i % t->cols;
        shown[i] = i < t->cols ? xstrdup(t->columns[col].heading)
                               : report_shown(t->cells[i - t->cols]);
        if (width_of(shown[i]) > width[col])
            width[col] = width_of(shown[i]);
    }
    for (size_t i = 0; i < n; i++) {
        size_t col = i % t->cols;
        size_t gap = width[col] - width_of(shown[i]);
        bool last = col + 1 == t->cols;
        if (t->columns[col].number)
            pad(out, gap);
        strbuf_adds(out, shown[i]);
        if (!t->columns[col].number && !last)
            pad(out, gap);
        strbuf_adds(out, last ? "\n" : "  ");
        free(shown[i]);
    }
    free(shown);
    free(width);
}

void report_text(const struct report *r, struct strbuf *out)
{
    report_heading(r, out);
    strbuf_addc(out, '\n');
    struct report_table t[REPORT_TABLES];
    report_tables(r, false, t);
    for (int i = 0; i < REPORT_TABLES; i++)
        table(&t[i], out);
    report_tables_free(t);
}
