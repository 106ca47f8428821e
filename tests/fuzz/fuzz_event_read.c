/* The event log as loginguardctl events reads it: whatever bytes are in
 * the file (a hostile or damaged log, a line being written), split into
 * lines however the reads fall, each parsed, filtered and shown as a row.
 * Every line handed on is within the bound and holds no line end; every
 * row is one line of text in which nothing can act on a terminal.  The
 * first byte sets the size of the reads, the first line is also tried as
 * a --since. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "event_filter.h"
#include "event_lines.h"
#include "event_row.h"
#include "fuzz.h"
#include "strbuf.h"
#include "units.h"
#include "utf8.h"

static void check_row(const char *row, size_t len)
{
    FUZZ_CHECK(len > 0 && row[len - 1] == '\n');
    const unsigned char *u = (const unsigned char *)row;
    for (size_t i = 0; i + 1 < len;) {
        bool acting;
        size_t n = utf8_unit(u + i, len - 1 - i, &acting);
        FUZZ_CHECK(n > 0 && !acting);
        i += n;
    }
}

static void on_line(const char *line, size_t len, void *arg)
{
    const struct event_filter *f = arg;
    FUZZ_CHECK(len <= EVENT_LINE_MAX);
    FUZZ_CHECK(memchr(line, '\n', len) == NULL);
    uint64_t time;
    json_t *e = event_parse_line(line, len, &time);
    if (!e)
        return;
    FUZZ_CHECK(json_is_string(json_object_get(e, "event")));
    event_filter_match(f, e, time);
    struct strbuf row = {0};
    event_row(e, time, &row);
    check_row(row.s, row.len);
    strbuf_free(&row);
    json_decref(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t chunk = (size_t)data[0] % 64 + 1;
    data++;
    size--;
    setenv("TZ", "UTC", 1);
    struct event_filter f = {0};
    char why[2048];
    const char *nl = memchr(data, '\n', size);
    size_t first = nl ? (size_t)(nl - (const char *)data) : size;
    char *text = strndup((const char *)data, first);
    if (event_since_parse(text, 1795600800ULL * USEC_PER_SEC, &f.since, why, sizeof(why)) < 0)
        FUZZ_CHECK(why[0] != '\0');
    if (event_filter_add_kinds(&f, text, why, sizeof(why)) < 0)
        FUZZ_CHECK(strstr(why, "events are:") != NULL);
    free(text);
    struct event_lines l = {0};
    for (size_t i = 0; i < size; i += chunk)
        event_lines_feed(&l, (const char *)data + i, i + chunk > size ? size - i : chunk, on_line,
                         &f);
    FUZZ_CHECK(l.len <= EVENT_LINE_MAX);
    event_lines_free(&l);
    event_filter_free(&f);
    return 0;
}
