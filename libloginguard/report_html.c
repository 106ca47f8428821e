#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base64.h"
#include "report_format.h"
#include "util.h"

/* Text from users, as HTML that only shows: controls escaped as in the
 * other formats, then the five characters HTML gives a meaning. */
static void add_text(struct strbuf *out, const char *s)
{
    char *shown = report_shown(s);
    for (const char *p = shown; *p; p++) {
        switch (*p) {
        case '&': strbuf_adds(out, "&amp;"); break;
        case '<': strbuf_adds(out, "&lt;"); break;
        case '>': strbuf_adds(out, "&gt;"); break;
        case '"': strbuf_adds(out, "&quot;"); break;
        case '\'': strbuf_adds(out, "&#39;"); break;
        default: strbuf_addc(out, *p); break;
        }
    }
    free(shown);
}

/* Nothing may be fetched and nothing run, whatever a cell holds: the
 * policy says so to the browser as well. */
static const char head[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
    "img-src data:; style-src 'unsafe-inline'\">\n"
    "<title>loginguard report</title>\n"
    "<style>\n"
    "body { font-family: sans-serif; margin: 1.5em; color: #222; background: #fff; }\n"
    "h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 1.6em; }\n"
    "table { border-collapse: collapse; font-size: 0.9em; }\n"
    "th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; }\n"
    "th { background: #eee; } td.n { text-align: right; }\n"
    "td.t { font-family: monospace; max-width: 40em; overflow-wrap: anywhere; }\n"
    "img { display: block; margin: 0.5em 0; }\n"
    "</style>\n</head>\n<body>\n";

static void image(struct strbuf *out, const char *title, const struct report_image *img)
{
    if (title) {
        strbuf_adds(out, "<h2>");
        add_text(out, title);
        strbuf_adds(out, "</h2>\n");
    }
    if (!img->png || !img->len) {
        strbuf_adds(out, "<p>(no chart: ");
        add_text(out, img->alt ? img->alt : "nothing to draw");
        strbuf_adds(out, ")</p>\n");
        return;
    }
    strbuf_addf(out, "<img width=\"%d\" height=\"%d\" alt=\"", img->width, img->height);
    add_text(out, img->alt ? img->alt : title ? title : "chart");
    strbuf_adds(out, "\" src=\"data:image/png;base64,");
    base64_encode(out, img->png, img->len, 0);
    strbuf_adds(out, "\">\n");
}

static void table(struct strbuf *out, const struct report_table *t)
{
    strbuf_addf(out, "<h2 id=\"%s\">", t->name);
    add_text(out, t->title);
    strbuf_adds(out, "</h2>\n");
    if (!t->rows) {
        strbuf_adds(out, "<p>(none)</p>\n");
        return;
    }
    strbuf_adds(out, "<table>\n<tr>");
    for (size_t c = 0; c < t->cols; c++) {
        strbuf_adds(out, "<th>");
        add_text(out, t->columns[c].heading);
        strbuf_adds(out, "</th>");
    }
    strbuf_adds(out, "</tr>\n");
    for (size_t i = 0; i < t->rows * t->cols; i++) {
        size_t c = i % t->cols;
        if (c == 0)
            strbuf_adds(out, "<tr>");
        strbuf_adds(out, t->columns[c].number ? "<td class=\"n\">" : "<td class=\"t\">");
        add_text(out, t->cells[i]);
        strbuf_adds(out, "</td>");
        if (c + 1 == t->cols)
            strbuf_adds(out, "</tr>\n");
    }
    strbuf_adds(out, "</table>\n");
}

void report_html(const struct report *r, const struct report_charts *charts, struct strbuf *out)
{
    strbuf_adds(out, head);
    strbuf_adds(out, "<h1>loginguard report</h1>\n<p>");
    struct strbuf heading = {0};
    report_heading(r, &heading);
    add_text(out, heading.s ? heading.s : "");
    strbuf_free(&heading);
    strbuf_adds(out, "</p>\n");
    if (charts->missing) {
        strbuf_adds(out, "<p>(no charts: ");
        add_text(out, charts->missing);
        strbuf_adds(out, ")</p>\n");
    } else {
        image(out, "Actions a day", &charts->days);
        strbuf_adds(out, "<h2>Usage at violations and time limited, by user</h2>\n");
        for (size_t i = 0; i < charts->user_count; i++)
            image(out, NULL, &charts->users[i]);
        if (!charts->user_count)
            strbuf_adds(out, "<p>(no violations)</p>\n");
    }
    struct report_table t[REPORT_TABLES];
    report_tables(r, false, t);
    for (int i = 0; i < REPORT_TABLES; i++)
        table(out, &t[i]);
    report_tables_free(t);
    strbuf_adds(out, "</body>\n</html>\n");
}
