#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event_filter.h"
#include "event_row.h"
#include "units.h"
#include "utf8.h"
#include "util.h"

#define TIME_WIDTH 19 /* "2026-11-25 10:00:05" */
#define USER_WIDTH 12 /* wider names push the row along */

static size_t event_width(void)
{
    size_t w = 0;
    for (size_t i = 0; i < event_kind_count; i++)
        if (strlen(event_kind_names[i]) > w)
            w = strlen(event_kind_names[i]);
    return w;
}

static void local_time(uint64_t usec, char *buf, size_t len)
{
    time_t t = (time_t)(usec / USEC_PER_SEC);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

/* Text as it may be shown, padded to width characters. */
static void add_escaped(struct strbuf *out, const char *s, size_t width)
{
    size_t len = strlen(s);
    char *shown = xmalloc(4 * len + 1);
    size_t n = utf8_escape(s, len, shown, 4 * len + 1), chars = 0;
    strbuf_add(out, shown, n);
    for (size_t i = 0; i < n; i++)
        chars += ((unsigned char)shown[i] & 0xc0) != 0x80;
    for (; chars < width; chars++)
        strbuf_addc(out, ' ');
    free(shown);
}

static const char *text(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

static long long integer(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

/* Starts each part of the summary after the first with "; ". */
static void part(struct strbuf *b)
{
    if (b->len)
        strbuf_adds(b, "; ");
}

static void levels(const json_t *e, struct strbuf *b)
{
    if (!json_is_integer(json_object_get(e, "level_before")))
        return;
    part(b);
    strbuf_addf(b, "level %lld -> %lld", integer(e, "level_before"), integer(e, "level_after"));
    const char *name = text(json_object_get(e, "level"), "name");
    if (name)
        strbuf_addf(b, " %s", name);
}

static void who_and_what(const json_t *e, struct strbuf *b)
{
    if (json_object_get(e, "by_uid")) {
        part(b);
        const char *by = text(e, "by");
        if (by)
            strbuf_addf(b, "by %s", by);
        else
            strbuf_addf(b, "by uid %lld", integer(e, "by_uid"));
    }
    if (text(e, "request")) {
        part(b);
        strbuf_addf(b, "request %s", text(e, "request"));
    }
    if (text(e, "channel")) {
        part(b);
        strbuf_addf(b, "%s notice by %s: %s", text(e, "kind") ? text(e, "kind") : "?",
                    text(e, "channel"), text(e, "outcome") ? text(e, "outcome") : "?");
    }
}

static void usage(const json_t *e, struct strbuf *b)
{
    const json_t *u = json_object_get(e, "usage");
    if (json_is_object(u)) {
        char mem[32];
        format_size((uint64_t)integer(u, "memory_bytes"), mem, sizeof(mem));
        part(b);
        strbuf_addf(b, "cpu %.2f cores, memory %s over %.0fs",
                    json_number_value(json_object_get(u, "cpu_cores")), mem,
                    json_number_value(json_object_get(u, "window_s")));
    }
    const json_t *procs = json_object_get(e, "processes");
    const json_t *top = json_array_get(procs, 0);
    if (json_is_object(top)) {
        part(b);
        strbuf_addf(b, "top pid %lld %s (%.2f cores)", integer(top, "pid"),
                    text(top, "comm") ? text(top, "comm") : "?",
                    json_number_value(json_object_get(top, "cpu_cores")));
        if (text(top, "rule"))
            strbuf_addf(b, " rule %s", text(top, "rule"));
        if (json_array_size(procs) > 1)
            strbuf_addf(b, " and %zu more", json_array_size(procs) - 1);
    }
}

static void process(const json_t *e, struct strbuf *b)
{
    const json_t *p = json_object_get(e, "process");
    if (json_is_object(p)) {
        part(b);
        strbuf_addf(b, "pid %lld %s", integer(p, "pid"), text(p, "comm") ? text(p, "comm") : "?");
        if (text(p, "exe"))
            strbuf_addf(b, " (%s)", text(p, "exe"));
        if (text(e, "signal"))
            strbuf_addf(b, " %s", text(e, "signal"));
    }
    const json_t *l = json_object_get(e, "limits");
    if (json_is_object(l)) {
        char mem[32];
        format_size((uint64_t)integer(l, "memory_bytes"), mem, sizeof(mem));
        part(b);
        strbuf_addf(b, "limits cpu %.2f cores, memory %s, tasks %lld (level %lld)",
                    json_number_value(json_object_get(l, "cpu_cores")), mem, integer(l, "tasks"),
                    integer(e, "level"));
    }
}

static void held(const json_t *e, struct strbuf *b)
{
    const json_t *h = json_object_get(e, "held");
    if (!json_is_object(h))
        return;
    part(b);
    strbuf_addf(b, "%lld held back (", integer(e, "total"));
    const char *kind;
    const json_t *count;
    const char *sep = "";
    json_object_foreach((json_t *)h, kind, count) {
        strbuf_addf(b, "%s%s %lld", sep, kind, (long long)json_integer_value(count));
        sep = ", ";
    }
    strbuf_addc(b, ')');
}

static void outcome(const json_t *e, struct strbuf *b)
{
    if (text(e, "reason")) {
        part(b);
        strbuf_addf(b, "reason %s", text(e, "reason"));
    }
    if (text(e, "action")) {
        part(b);
        strbuf_addf(b, "action %s", text(e, "action"));
        if (json_is_false(json_object_get(e, "applied")))
            strbuf_addf(b, " (not applied, %s)", text(e, "mode") ? text(e, "mode") : "observe");
    }
    uint64_t until;
    if (text(e, "until") && event_time_parse(text(e, "until"), &until) == 0) {
        char t[64];
        local_time(until, t, sizeof(t));
        part(b);
        strbuf_addf(b, "until %s", t);
    }
    if (text(e, "message")) {
        part(b);
        strbuf_adds(b, text(e, "message"));
    }
}

void event_row_heading(struct strbuf *out)
{
    strbuf_addf(out, "%-*s  %-*s  %-*s  %s\n", TIME_WIDTH, "TIME", USER_WIDTH, "USER",
                (int)event_width(), "EVENT", "DETAILS");
}

void event_row(const json_t *e, uint64_t time, struct strbuf *out)
{
    char when[64];
    local_time(time, when, sizeof(when));
    strbuf_addf(out, "%-*s  ", TIME_WIDTH, when);
    const char *user = text(e, "user");
    char uid[32] = "-";
    if (json_is_integer(json_object_get(e, "uid")))
        snprintf(uid, sizeof(uid), "%lld", integer(e, "uid"));
    add_escaped(out, user && *user ? user : uid, USER_WIDTH);
    strbuf_adds(out, "  ");
    add_escaped(out, text(e, "event"), event_width());
    struct strbuf details = {0};
    levels(e, &details);
    who_and_what(e, &details);
    usage(e, &details);
    process(e, &details);
    held(e, &details);
    outcome(e, &details);
    if (details.len) {
        strbuf_adds(out, "  ");
        add_escaped(out, details.s, 0);
    }
    strbuf_free(&details);
    /* No trailing blanks when there are no details. */
    while (out->len && out->s[out->len - 1] == ' ')
        out->s[--out->len] = '\0';
    strbuf_addc(out, '\n');
}
