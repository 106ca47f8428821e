/* The report's formats (loginguardctl report --format): each writes the
 * whole report into out.  Text from users (names, comm, exe, rules) is
 * made harmless the way each format needs: escaped for a terminal
 * (text), quoted by RFC 4180 (CSV), JSON strings (JSON), escaped for
 * HTML with no script (HTML). */
#ifndef LOGINGUARD_REPORT_FORMAT_H
#define LOGINGUARD_REPORT_FORMAT_H

#include <stddef.h>

#include "report.h"
#include "report_tables.h"
#include "strbuf.h"

/* A PNG image, for the HTML. */
struct report_image {
    const unsigned char *png;
    size_t len;
    int width, height;     /* in pixels */
    const char *alt;       /* what it shows, for a reader without images */
};

/* The HTML's charts; an image without png is left out (with its alt
 * said instead). */
struct report_charts {
    struct report_image days;     /* actions a day */
    struct report_image *users;   /* a usage chart for each of the top users */
    size_t user_count;
    const char *missing;          /* why there are none (cairo missing), or NULL */
};

/* The line that says what the report covers. */
void report_heading(const struct report *r, struct strbuf *out);

void report_text(const struct report *r, struct strbuf *out);
/* One table (CSV holds one), with a heading row; lines end in CRLF. */
void report_csv(const struct report *r, enum report_table_id table, struct strbuf *out);
void report_json(const struct report *r, struct strbuf *out);
/* One self-contained file: style inline, images as data: URIs, no script
 * and nothing fetched from anywhere. */
void report_html(const struct report *r, const struct report_charts *charts,
                 struct strbuf *out);

/* s as text that only shows (utf8_escape), to be freed. */
char *report_shown(const char *s);

#endif
