#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "report_format.h"
#include "util.h"

/* RFC 4180: a field with a comma, a quote or a line break is quoted,
 * its quotes doubled.  Controls are shown escaped first (report_shown),
 * so what is left to quote is commas and quotes; a leading or trailing
 * space is quoted too, for readers that trim. */
static void field(struct strbuf *out, const char *s)
{
    char *shown = report_shown(s);
    size_t len = strlen(shown);
    bool quote = strpbrk(shown, ",\"\r\n") != NULL ||
                 (len && (shown[0] == ' ' || shown[len - 1] == ' '));
    if (!quote) {
        strbuf_adds(out, shown);
    } else {
        strbuf_addc(out, '"');
        for (const char *p = shown; *p; p++) {
            if (*p == '"')
                strbuf_addc(out, '"');
            strbuf_addc(out, *p);
        }
        strbuf_addc(out, '"');
    }
    free(shown);
}

void report_csv(const struct report *r, enum report_table_id which, struct strbuf *out)
{
    struct report_table t[REPORT_TABLES];
    report_tables(r, true, t);
    const struct report_table *tab = &t[which];
    for (size_t c = 0; c < tab->cols; c++) {
        if (c)
            strbuf_addc(out, ',');
        field(out, tab->columns[c].key);
    }
    strbuf_adds(out, "\r\n");
    for (size_t i = 0; i < tab->rows * tab->cols; i++) {
        if (i % tab->cols)
            strbuf_addc(out, ',');
        field(out, tab->cells[i]);
        if ((i + 1) % tab->cols == 0)
            strbuf_adds(out, "\r\n");
    }
    report_tables_free(t);
}
