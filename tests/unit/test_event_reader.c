/* Reading the event log (loginguardctl events): lines, what an event
 * is, filters, the rotated copies and rows for people. */
#include "config.h"

#include <errno.h>
#include <sys/time.h>
#include <time.h>
#include <zlib.h>

#include "engine.h"
#include "event_files.h"
#include "event_filter.h"
#include "event_lines.h"
#include "event_row.h"
#include "seen_lines.h"
#include "testutil.h"
#include "units.h"
#include "util.h"

/* ------------------------------------------------------------------ */
/* Lines */

static void test_lines_split_whatever_the_reads(void **state)
{
    (void)state;
    static const char text[] = "{\"a\":1}\n{\"b\":2}\n\n{\"c\":3}";
    /* Byte by byte, as a reader racing the writer may see them. */
    struct event_lines l = {0};
    struct seen s = {0};
    for (size_t i = 0; i < sizeof(text) - 1; i++)
        event_lines_feed(&l, text + i, 1, collect, &s);
    assert_int_equal(s.count, 3);
    assert_string_equal(s.lines[0], "{\"a\":1}");
    assert_string_equal(s.lines[1], "{\"b\":2}");
    assert_string_equal(s.lines[2], "");
    /* The last line is held until its end comes. */
    assert_true(event_lines_pending(&l));
    event_lines_feed(&l, "\n", 1, collect, &s);
    assert_int_equal(s.count, 4);
    assert_string_equal(s.lines[3], "{\"c\":3}");
    assert_false(event_lines_pending(&l));
    seen_free(&s);
    /* All at once, the same. */
    event_lines_feed(&l, text, sizeof(text) - 1, collect, &s);
    assert_int_equal(s.count, 3);
    assert_true(event_lines_drop(&l));
    assert_false(event_lines_drop(&l));
    seen_free(&s);
    event_lines_free(&l);
}

static void test_overlong_lines_are_skipped_and_counted(void **state)
{
    (void)state;
    size_t big = EVENT_LINE_MAX + 10;
    char *data = malloc(2 * big + 64);
    memset(data, 'x', big);
    data[big] = '\n';
    strcpy(data + big + 1, "ok\n");
    memset(data + big + 4, 'y', EVENT_LINE_MAX);
    data[big + 4 + EVENT_LINE_MAX] = '\n'; /* exactly the bound: kept */
    size_t len = big + 5 + EVENT_LINE_MAX;
    for (size_t chunk = 1; chunk <= len; chunk = chunk * 7 + 3) {
        struct event_lines l = {0};
        struct seen s = {0};
        for (size_t i = 0; i < len; i += chunk)
            event_lines_feed(&l, data + i, i + chunk > len ? len - i : chunk, collect, &s);
        assert_int_equal(l.oversized, 1);
        assert_int_equal(s.count, 2);
        assert_string_equal(s.lines[0], "ok");
        assert_int_equal(strlen(s.lines[1]), EVENT_LINE_MAX);
        seen_free(&s);
        event_lines_free(&l);
    }
    /* Endless text with no line end holds at most the bound. */
    struct event_lines l = {0};
    struct seen s = {0};
    for (int i = 0; i < 100; i++)
        event_lines_feed(&l, data, big, collect, &s);
    assert_int_equal(s.count, 0);
    assert_int_equal(l.oversized, 1);
    assert_true(l.cap <= EVENT_LINE_MAX);
    event_lines_free(&l);
    free(data);
}

/* ------------------------------------------------------------------ */
/* What an event is */

static void test_only_events_parse(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "", "garbage", "[1,2]", "\"text\"", "{\"event\":\"violation\"}",
        "{\"time\":\"2026-11-25T10:00:00.000Z\"}",
        "{\"time\":\"2026-11-25 10:00:00\",\"event\":\"violation\"}",
        "{\"time\":\"2026-11-25T10:00:00.000Zjunk\",\"event\":\"violation\"}",
        "{\"time\":5,\"event\":\"violation\"}",
        "{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":7}",
        "{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"a\\u0000b\"}",
        "{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"violation\"", /* cut short */
        "{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"a\",\"event\":\"b\"}",
        "{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"v\",\"user\":\"\xff\"}",
    };
    uint64_t t;
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        assert_null(event_parse_line(bad[i], strlen(bad[i]), &t));
    static const char good[] = "{\"time\":\"2026-11-25T10:00:01.250Z\",\"event\":\"violation\"}";
    json_t *e = event_parse_line(good, strlen(good), &t);
    assert_non_null(e);
    assert_int_equal(t, 1795600801ULL * USEC_PER_SEC + 250000);
    json_decref(e);
}

/* ------------------------------------------------------------------ */
/* Filters */

static json_t *ev(const char *kind, const char *user, int uid)
{
    json_t *e = json_pack("{s:s, s:s}", "time", "2026-11-25T10:00:00.000Z", "event", kind);
    if (user)
        json_object_set_new(e, "user", json_string(user));
    if (uid >= 0)
        json_object_set_new(e, "uid", json_integer(uid));
    return e;
}

static void test_filter_by_kind(void **state)
{
    (void)state;
    struct event_filter f = {0};
    char why[2048];
    assert_int_equal(event_filter_add_kinds(&f, "violation,limits_set", why, sizeof(why)), 0);
    assert_int_equal(event_filter_add_kinds(&f, "notice", why, sizeof(why)), 0);
    assert_int_equal(event_filter_add_kinds(&f, "", why, sizeof(why)), 0);
    json_t *v = ev("violation", "alice", 1001), *l = ev("limits_set", "bob", 1002),
           *n = ev("notice", "alice", 1001), *s = ev("daemon_started", NULL, -1);
    assert_true(event_filter_match(&f, v, 1));
    assert_true(event_filter_match(&f, l, 1));
    assert_true(event_filter_match(&f, n, 1));
    assert_false(event_filter_match(&f, s, 1));
    /* A name that no event has is an error that lists those there are. */
    assert_int_equal(event_filter_add_kinds(&f, "notice,violaton", why, sizeof(why)), -1);
    assert_non_null(strstr(why, "no event is called \"violaton\""));
    assert_non_null(strstr(why, "violation, level_expired"));
    assert_non_null(strstr(why, "config_error"));
    event_filter_free(&f);
    /* No kind: every kind. */
    assert_true(event_filter_match(&f, s, 1));
    json_decref(v);
    json_decref(l);
    json_decref(n);
    json_decref(s);
}

/* Every event the engine decides on is a kind the reader knows. */
static void test_engine_events_are_known_kinds(void **state)
{
    (void)state;
    struct event_filter f = {0};
    char why[2048];
    for (int k = DECISION_VIOLATION; k <= DECISION_EXEMPT_ENDED; k++)
        assert_int_equal(event_filter_add_kinds(&f, decision_name((enum decision_kind)k), why,
                                                sizeof(why)), 0);
    event_filter_free(&f);
}

static void test_filter_by_user(void **state)
{
    (void)state;
    json_t *a = ev("violation", "alice", 1001), *b = ev("violation", "bob", 1002),
           *gone = ev("violation", "carol", 1003), *nameless = ev("violation", NULL, 1001),
           *daemon = ev("daemon_started", NULL, -1);
    struct event_filter f = {0};
    event_filter_user(&f, NULL, true, 1001); /* --user 1001 */
    assert_true(event_filter_match(&f, a, 0));
    assert_true(event_filter_match(&f, nameless, 0));
    assert_false(event_filter_match(&f, b, 0));
    assert_false(event_filter_match(&f, daemon, 0));
    event_filter_free(&f);
    event_filter_user(&f, "alice", true, 1001); /* --user alice, in passwd */
    assert_true(event_filter_match(&f, a, 0));
    assert_true(event_filter_match(&f, nameless, 0));
    assert_false(event_filter_match(&f, b, 0));
    event_filter_free(&f);
    event_filter_user(&f, "carol", false, 0); /* removed from passwd since */
    assert_true(event_filter_match(&f, gone, 0));
    assert_false(event_filter_match(&f, a, 0));
    assert_false(event_filter_match(&f, daemon, 0));
    event_filter_free(&f);
    json_decref(a);
    json_decref(b);
    json_decref(gone);
    json_decref(nameless);
    json_decref(daemon);
}

static void test_since(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    uint64_t now = 1795600800ULL * USEC_PER_SEC; /* 2026-11-25T10:00:00Z */
    uint64_t t;
    char why[400];
    static const struct {
        const char *text;
        long long ago; /* seconds before now */
    } cases[] = {
        {"1h", 3600}, {"90s", 90}, {"2d", 172800}, {"today", 36000}, {"yesterday", 122400},
        {"2026-11-25", 36000}, {"2026-11-25 09:30", 1800}, {"2026-11-25T09:30", 1800},
        {"2026-11-25 09:59:59", 1}, {"2026-11-25T09:59:58Z", 2}, {"09:00", 3600},
        {"09:00:30", 3570}, {"2026-11-26", -50400},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        assert_int_equal(event_since_parse(cases[i].text, now, &t, why, sizeof(why)), 0);
        assert_int_equal((long long)(now / USEC_PER_SEC) - (long long)(t / USEC_PER_SEC),
                         cases[i].ago);
    }
    /* Local time is local. */
    setenv("TZ", "CET-1", 1);
    tzset();
    assert_int_equal(event_since_parse("2026-11-25 10:00", now, &t, why, sizeof(why)), 0);
    assert_int_equal(t, now - 3600 * USEC_PER_SEC);
    assert_int_equal(event_since_parse("2026-11-25T10:00:00Z", now, &t, why, sizeof(why)), 0);
    assert_int_equal(t, now);
    setenv("TZ", "UTC", 1);
    tzset();
    static const char *const bad[] = {"", "soon", "1 hour", "-1h", "2026-13-45", "10:00 pm",
                                      "2026-11-25 10:00 CET", "1h ago"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        assert_int_equal(event_since_parse(bad[i], now, &t, why, sizeof(why)), -1);
        assert_non_null(strstr(why, "--since"));
    }
    /* Events before the time are left out, those at it and after shown. */
    struct event_filter f = {.since = now};
    json_t *e = ev("violation", "a", 1);
    assert_false(event_filter_match(&f, e, now - 1));
    assert_true(event_filter_match(&f, e, now));
    json_decref(e);
}

/* ------------------------------------------------------------------ */
/* The rotated copies */

static void write_gz(const char *name, const char *content, size_t cut)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", test_dir, name);
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    gzwrite(gz, content, (unsigned)strlen(content));
    gzclose(gz);
    if (cut)
        assert_int_equal(truncate(path, cut), 0);
}

static void set_age(const char *name, time_t ago)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", test_dir, name);
    struct timeval tv[2] = {{time(NULL) - ago, 0}, {time(NULL) - ago, 0}};
    assert_int_equal(utimes(path, tv), 0);
}

static void test_rotated_copies_oldest_first(void **state)
{
    (void)state;
    make_test_dir();
    write_file("log/events.jsonl", "");
    write_file("log/events.jsonl.1", "");
    write_gz("log/events.jsonl.2.gz", "", 0);
    write_file("log/events.jsonl.3", "");    /* being compressed: */
    write_gz("log/events.jsonl.3.gz", "", 0); /* the plain one is whole */
    write_gz("log/events.jsonl.10.gz", "", 0);
    /* Not logrotate's copies of this log. */
    write_file("log/events.jsonl.0", "");
    write_file("log/events.jsonl.old", "");
    write_file("log/events.jsonl.1.gz.tmp", "");
    write_file("log/events.jsonl.01", "");
    write_file("log/other.jsonl.1", "");
    write_file("log/events.jsonl.2x", "");
    char path[256];
    snprintf(path, sizeof(path), "%s/log/events.jsonl", test_dir);
    struct event_files files;
    event_files_list(path, 1, &files);
    static const char *const want[] = {"events.jsonl.10.gz", "events.jsonl.3",
                                       "events.jsonl.2.gz", "events.jsonl.1", "events.jsonl"};
    assert_int_equal(files.count, 5);
    for (size_t i = 0; i < files.count; i++)
        assert_string_equal(strrchr(files.paths[i], '/') + 1, want[i]);
    event_files_free(&files);
    /* Copies last written before --since hold nothing newer. */
    set_age("log/events.jsonl.10.gz", 7200);
    set_age("log/events.jsonl.3", 7200);
    set_age("log/events.jsonl.3.gz", 7200);
    set_age("log/events.jsonl.2.gz", 3000);
    event_files_list(path, now_realtime_usec() - 3600 * USEC_PER_SEC, &files);
    assert_int_equal(files.count, 3);
    assert_string_equal(strrchr(files.paths[0], '/') + 1, "events.jsonl.2.gz");
    event_files_free(&files);
    /* The log itself is there whatever its age, even when missing. */
    snprintf(path, sizeof(path), "%s/nowhere/events.jsonl", test_dir);
    event_files_list(path, 0, &files);
    assert_int_equal(files.count, 1);
    assert_string_equal(files.paths[0], path);
    event_files_free(&files);
    remove_test_dir();
}

static void count(const char *line, size_t len, void *arg)
{
    (void)line;
    (void)len;
    (*(size_t *)arg)++;
}

static void test_compressed_and_plain_copies_read_alike(void **state)
{
    (void)state;
    make_test_dir();
    static const char text[] = "{\"n\":1}\n{\"n\":2}\n{\"n\":3";
    write_file("plain", text);
    write_gz("packed.gz", text, 0);
    static const char *const names[] = {"plain", "packed.gz"};
    for (size_t i = 0; i < 2; i++) {
        char path[256];
        snprintf(path, sizeof(path), "%s/%s", test_dir, names[i]);
        struct event_lines l = {0};
        struct seen s = {0};
        assert_int_equal(event_file_read(path, &l, collect, &s), 0);
        assert_int_equal(s.count, 2);
        assert_string_equal(s.lines[1], "{\"n\":2}");
        assert_true(event_lines_drop(&l)); /* the last one, never ended */
        seen_free(&s);
        event_lines_free(&l);
    }
    /* A compressed copy cut short (a full disk while logrotate wrote it):
     * what is there is read, and the rest is an error. */
    char *big = malloc(200001);
    for (size_t i = 0; i < 200000; i += 20)
        snprintf(big + i, 21, "{\"n\":%013zu}\n", i);
    write_gz("cut.gz", big, 2000);
    char path[256];
    snprintf(path, sizeof(path), "%s/cut.gz", test_dir);
    struct event_lines l = {0};
    size_t lines = 0;
    errno = 0;
    assert_int_equal(event_file_read(path, &l, count, &lines), -1);
    assert_int_equal(errno, EIO);
    assert_true(lines > 0 && lines < 10000);
    event_lines_free(&l);
    free(big);
    snprintf(path, sizeof(path), "%s/absent", test_dir);
    assert_int_equal(event_file_read(path, &l, count, &lines), -1);
    assert_int_equal(errno, ENOENT);
    remove_test_dir();
}

/* ------------------------------------------------------------------ */
/* Rows for people */

static char *row_of(const char *line)
{
    uint64_t t;
    json_t *e = event_parse_line(line, strlen(line), &t);
    assert_non_null(e);
    struct strbuf b = {0};
    event_row(e, t, &b);
    json_decref(e);
    return strbuf_take(&b);
}

static void test_rows_say_what_matters(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    static const struct {
        const char *line, *want;
    } cases[] = {
        {"{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"violation\",\"user\":\"alice\","
         "\"uid\":1001,\"level_before\":0,\"level_after\":1,\"level\":{\"number\":1,\"name\":"
         "\"throttled\"},\"reason\":\"cpu\",\"usage\":{\"cpu_cores\":2.5,\"memory_bytes\":"
         "1073741824,\"window_s\":60.0},\"processes\":[{\"pid\":42,\"comm\":\"sim\",\"cpu_cores\":"
         "2.4,\"rule\":\"r1\"},{\"pid\":43}],\"until\":\"2026-11-25T10:10:00.000Z\",\"action\":"
         "\"limit\",\"applied\":true,\"mode\":\"enforce\"}",
         "2026-11-25 10:00:00  alice         violation             level 0 -> 1 throttled; "
         "cpu 2.50 cores, memory 1.0G over 60s; top pid 42 sim (2.40 cores) rule r1 and 1 more; "
         "reason cpu; action limit; until 2026-11-25 10:10:00\n"},
        {"{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"forbidden_process\",\"user\":\"bob\","
         "\"uid\":1002,\"level_before\":0,\"level_after\":0,\"level\":null,\"reason\":\"xmrig\","
         "\"action\":\"stop\",\"applied\":false,\"mode\":\"observe\"}",
         "2026-11-25 10:00:00  bob           forbidden_process     level 0 -> 0; reason xmrig; "
         "action stop (not applied, observe)\n"},
        {"{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"limits_set\",\"uid\":1003,"
         "\"limits\":{\"cpu_cores\":0.5,\"memory_bytes\":4294967296,\"tasks\":512},\"level\":1}",
         "2026-11-25 10:00:00  1003          limits_set            limits cpu 0.50 cores, "
         "memory 4.0G, tasks 512 (level 1)\n"},
        {"{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"process_stopping\",\"user\":\"bob\","
         "\"uid\":1002,\"process\":{\"pid\":7,\"comm\":\"sim\",\"exe\":\"/bin/sim\"},\"reason\":"
         "\"restricted\",\"signal\":\"SIGTERM\"}",
         "2026-11-25 10:00:00  bob           process_stopping      pid 7 sim (/bin/sim) SIGTERM; "
         "reason restricted\n"},
        {"{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"notice\",\"user\":\"bob\",\"uid\":1,"
         "\"kind\":\"violation\",\"channel\":\"tty\",\"outcome\":\"sent\"}",
         "2026-11-25 10:00:00  bob           notice                violation notice by tty: "
         "sent\n"},
        {"{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"exempt_added\",\"user\":\"bob\","
         "\"uid\":1002,\"by_uid\":0,\"by\":\"root\",\"reason\":\"demo\",\"until\":"
         "\"2026-11-25T14:00:00.000Z\"}",
         "2026-11-25 10:00:00  bob           exempt_added          by root; reason demo; until "
         "2026-11-25 14:00:00\n"},
        {"{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"user_forgiven\",\"user\":\"bob\","
         "\"uid\":1002,\"by_uid\":5000,\"by\":null,\"level_before\":2}",
         "2026-11-25 10:00:00  bob           user_forgiven         level 2 -> 0; by uid 5000\n"},
        {"{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"control_refused\",\"user\":\"eve\","
         "\"uid\":1005,\"by_uid\":1005,\"by\":\"eve\",\"request\":\"forgive\",\"message\":\"no\"}",
         "2026-11-25 10:00:00  eve           control_refused       by eve; request forgive; "
         "no\n"},
        {"{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"events_suppressed\",\"user\":\"eve\","
         "\"uid\":1005,\"held\":{\"notice\":2,\"forbidden_process\":3},\"total\":5}",
         "2026-11-25 10:00:00  eve           events_suppressed     5 held back (notice 2, "
         "forbidden_process 3)\n"},
        {"{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"daemon_started\",\"message\":"
         "\"observe mode\"}",
         "2026-11-25 10:00:00  -             daemon_started        observe mode\n"},
        {"{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"daemon_stopped\"}",
         "2026-11-25 10:00:00  -             daemon_stopped\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char *row = row_of(cases[i].line);
        assert_string_equal(row, cases[i].want);
        free(row);
    }
    struct strbuf b = {0};
    event_row_heading(&b);
    assert_string_equal(b.s, "TIME                 USER          EVENT                 DETAILS\n");
    strbuf_free(&b);
}

/* Nothing a user or an admin wrote reaches the terminal as anything but
 * text: no control, C1 control or bidirectional control, in any field
 * that a row shows. */
static void test_rows_escape_hostile_text(void **state)
{
    (void)state;
    static const char *const hostile[] = {
        "\\u001b]0;pwned\\u0007", "\\u001b[2J", "\\u009b1m", "\\u0085", "\\u202e",
        "\\u2066", "\\u200f", "\\u061c", "\\r", "\\n", "\\u007f", "\\b",
    };
    static const char *const shapes[] = {
        "{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"violation\",\"user\":\"a%sb\","
        "\"uid\":1,\"level_before\":0,\"level_after\":1,\"level\":{\"name\":\"x%s\"},"
        "\"reason\":\"r%s\",\"processes\":[{\"pid\":1,\"comm\":\"c%s\",\"rule\":\"u%s\"}],"
        "\"action\":\"a%s\",\"message\":\"m%s\"}",
        "{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"process_killed\",\"user\":\"a%s\","
        "\"uid\":1,\"process\":{\"pid\":1,\"comm\":\"c%s\",\"exe\":\"/e%s\"},\"signal\":\"s%s\","
        "\"by\":\"b%s\",\"by_uid\":0,\"request\":\"q%s\",\"message\":\"m%s\"}",
        "{\"time\":\"2026-11-25T10:00:00.000Z\",\"event\":\"e%s\",\"kind\":\"k%s\",\"channel\":"
        "\"c%s\",\"outcome\":\"o%s\",\"held\":{\"h%s\":1},\"until\":\"u%s\",\"user\":\"%s\"}",
    };
    for (size_t h = 0; h < sizeof(hostile) / sizeof(*hostile); h++) {
        for (size_t s = 0; s < sizeof(shapes) / sizeof(*shapes); s++) {
            char line[2048];
            const char *x = hostile[h];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
            snprintf(line, sizeof(line), shapes[s], x, x, x, x, x, x, x);
#pragma GCC diagnostic pop
            char *row = row_of(line);
            const unsigned char *p = (const unsigned char *)row;
            size_t len = strlen(row);
            assert_int_equal(row[len - 1], '\n');
            for (size_t i = 0; i + 1 < len; i++) {
                assert_true(p[i] >= 0x20 && p[i] != 0x7f);
                assert_false(p[i] == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f);
                assert_false(p[i] == 0xe2 && p[i + 1] == 0x80 && i + 2 < len &&
                             (p[i + 2] == 0xae || p[i + 2] == 0x8f));
                assert_false(p[i] == 0xe2 && p[i + 1] == 0x81 && i + 2 < len &&
                             p[i + 2] == 0xa6);
                assert_false(p[i] == 0xd8 && p[i + 1] == 0x9c);
            }
            assert_non_null(strstr(row, "\\x"));
            free(row);
        }
    }
}

/* report's and simulate's --since and --until. */
static void test_range(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    uint64_t now = 1795600800ULL * USEC_PER_SEC, since, until;
    char why[400];
    assert_int_equal(event_range_parse(NULL, NULL, now, &since, &until, why, sizeof(why)), 0);
    assert_int_equal(since, now - 7 * 86400 * USEC_PER_SEC);
    assert_int_equal(until, now);
    assert_int_equal(event_range_parse("2d", "1d", now, &since, &until, why, sizeof(why)), 0);
    assert_int_equal(until - since, 86400 * USEC_PER_SEC);
    assert_int_equal(event_range_parse("1d", "2d", now, &since, &until, why, sizeof(why)), -1);
    assert_string_equal(why, "--until must be later than --since");
    assert_int_equal(event_range_parse("1h", "soon", now, &since, &until, why, sizeof(why)), -1);
    assert_non_null(strstr(why, "soon"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_split_whatever_the_reads),
        cmocka_unit_test(test_overlong_lines_are_skipped_and_counted),
        cmocka_unit_test(test_only_events_parse),
        cmocka_unit_test(test_filter_by_kind),
        cmocka_unit_test(test_engine_events_are_known_kinds),
        cmocka_unit_test(test_filter_by_user),
        cmocka_unit_test(test_since),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_rotated_copies_oldest_first),
        cmocka_unit_test(test_compressed_and_plain_copies_read_alike),
        cmocka_unit_test(test_rows_say_what_matters),
        cmocka_unit_test(test_rows_escape_hostile_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
