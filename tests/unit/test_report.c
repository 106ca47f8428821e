/* loginguardctl report: the counts from a known list of events, and each
 * format of them (hostile names escaped, quoted, kept out of markup). */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <time.h>

#include "event_filter.h"
#include "report.h"
#include "report_format.h"
#include "testutil.h"
#include "units.h"

#define A 2000000101
#define B 2000000102
#define C 2000000103

/* Level 1 warns, 2 limits CPU and stops, 3 limits CPU. */
#define L1 "{\"number\":1,\"name\":\"warned\",\"cpu_cores\":0.0,\"memory_bytes\":0}"
#define L2 "{\"number\":2,\"name\":\"restricted\",\"cpu_cores\":0.5,\"memory_bytes\":0}"
#define L3 "{\"number\":3,\"name\":\"throttled\",\"cpu_cores\":1.0,\"memory_bytes\":0}"
#define PROC(comm, exe) "[{\"pid\":1,\"comm\":" comm ",\"exe\":" exe ",\"class\":\"none\"}]"
#define VIOL(time, user, uid, after, level, until, action, procs, cpu)                          \
    "{\"time\":\"" time "\",\"event\":\"violation\",\"user\":" user ",\"uid\":" uid            \
    ",\"level_after\":" after ",\"level\":" level ",\"usage\":{\"cpu_cores\":" cpu             \
    ",\"memory_bytes\":2147483648},\"processes\":" procs ",\"until\":\"" until                 \
    "\",\"action\":\"" action "\"}"

/* The range is 2026-11-10 to 2026-11-13 (UTC); some events are before it
 * (what they leave open counts) and one after it (not counted). */
static const char *const events[] = {
    VIOL("2026-11-09T23:00:00.000Z", "\"alice\"", "2000000101", "3", L3,
         "2026-11-10T01:00:00.000Z", "limit", PROC("\"python3\"", "\"/usr/bin/python3\""), "3"),
    "{\"time\":\"2026-11-10T01:00:02.000Z\",\"event\":\"level_expired\",\"user\":\"alice\","
    "\"uid\":2000000101,\"action\":\"release\"}",
    VIOL("2026-11-10T05:00:00.000Z", "\"alice\"", "2000000101", "2", L2,
         "2026-11-10T06:00:00.000Z", "stop", PROC("\"python3\"", "\"/usr/bin/python3\""), "3.5"),
    "{\"time\":\"2026-11-10T05:00:01.000Z\",\"event\":\"notice\",\"user\":\"alice\","
    "\"uid\":2000000101,\"kind\":\"stopped\",\"channel\":\"email\",\"outcome\":\"sent\"}",
    "{\"time\":\"2026-11-10T05:00:01.000Z\",\"event\":\"notice\",\"user\":\"alice\","
    "\"uid\":2000000101,\"kind\":\"stopped\",\"channel\":\"tty\",\"outcome\":\"skipped\"}",
    "{\"time\":\"2026-11-10T06:00:01.000Z\",\"event\":\"level_expired\",\"user\":\"alice\","
    "\"uid\":2000000101,\"action\":\"release\"}",
    "{\"time\":\"2026-11-10T07:00:00.000Z\",\"event\":\"forbidden_process\",\"user\":\"bob\","
    "\"uid\":2000000102,\"reason\":\"xmrig\",\"processes\":[{\"comm\":\"xmrig\",\"exe\":"
    "\"/home/bob/xmrig\",\"rule\":\"xmrig\"}],\"action\":\"stop\"}",
    VIOL("2026-11-11T10:00:00.000Z", "\"bob\"", "2000000102", "1", L1,
         "2026-11-11T10:15:00.000Z", "warn",
         PROC("\"a,b\\\"c<script>\\u001b[31m\\nx\"", "\"/tmp/x y\""), "2"),
    "{\"time\":\"2026-11-11T10:30:00.000Z\",\"event\":\"user_forgiven\",\"user\":\"bob\","
    "\"uid\":2000000102,\"level_before\":1}",
    VIOL("2026-11-11T12:00:00.000Z", "\"bob\"", "2000000102", "1", L1,
         "2026-11-11T12:15:00.000Z", "warn", PROC("\"python3\"", "\"/usr/bin/python3\""), "2.5"),
    "{\"time\":\"2026-11-11T13:00:00.000Z\",\"event\":\"compute_process\",\"user\":null,"
    "\"uid\":2000000103,\"reason\":\"lammps\",\"processes\":[{\"comm\":\"lmp\",\"exe\":"
    "\"/opt/lmp\",\"rule\":\"lammps\"}],\"action\":\"stop\"}",
    "{\"time\":\"2026-11-12T08:00:00.000Z\",\"event\":\"level_decayed\",\"user\":\"alice\","
    "\"uid\":2000000101,\"action\":\"lower\"}",
    VIOL("2026-11-12T23:30:00.000Z", "\"alice\"", "2000000101", "2", L2,
         "2026-11-13T00:30:00.000Z", "stop", PROC("\"python3\"", "\"/usr/bin/python3\""), "5"),
    "{\"time\":\"2026-11-12T23:30:01.000Z\",\"event\":\"notice\",\"user\":\"alice\","
    "\"uid\":2000000101,\"kind\":\"stopped\",\"channel\":\"all\",\"outcome\":\"rate_limited\"}",
    VIOL("2026-11-13T01:00:00.000Z", "\"bob\"", "2000000102", "2", L2,
         "2026-11-13T02:00:00.000Z", "stop", PROC("\"python3\"", "\"/usr/bin/python3\""), "4"),
};

static uint64_t at(const char *iso)
{
    uint64_t t;
    if (event_time_parse(iso, &t) < 0)
        abort();
    return t;
}

static void build(struct report *r)
{
    report_init(r, at("2026-11-10T00:00:00.000Z"), at("2026-11-13T00:00:00.000Z"));
    for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
        uint64_t time;
        json_t *e = event_parse_line(events[i], strlen(events[i]), &time);
        assert_non_null(e);
        report_add(r, e, time);
        json_decref(e);
    }
    report_finish(r);
}

static int utc(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    return 0;
}

static void users_by_violations_time_limited_and_returns(void **state)
{
    (void)state;
    struct report r;
    build(&r);
    assert_int_equal(r.events, 13);
    assert_int_equal(r.user_count, 3);
    const struct report_user *alice = &r.users[0], *bob = &r.users[1], *carol = &r.users[2];
    assert_string_equal(alice->name, "alice");
    assert_int_equal(alice->violations, 2);
    /* 00:00-01:00 (begun before the range), 05:00-06:00, and 23:30 to
     * the range's end. */
    assert_int_equal(alice->limited_usec, (2 * 3600 + 1800) * USEC_PER_SEC);
    assert_int_equal(alice->span_count, 3);
    assert_int_equal(alice->top_level, 2);
    assert_int_equal(alice->notices, 1);
    /* Back after the expiry at 01:00, and after the decay. */
    assert_int_equal(alice->returns, 2);
    assert_int_equal(alice->point_count, 2);
    assert_true(alice->points[1].cpu_cores == 5);
    assert_string_equal(bob->name, "bob");
    assert_int_equal(bob->violations, 2);
    assert_int_equal(bob->limited_usec, 0); /* warned only: no limits */
    assert_int_equal(bob->processes, 1);
    assert_int_equal(bob->returns, 1);      /* after the forgive */
    assert_null(carol->name);
    assert_int_equal(carol->uid, C);
    assert_int_equal(carol->processes, 1);
    char *label = report_user_label(carol);
    assert_string_equal(label, "uid 2000000103");
    free(label);
    report_free(&r);
}

static void programs_rules_and_days(void **state)
{
    (void)state;
    struct report r;
    build(&r);
    assert_int_equal(r.program_count, 4);
    assert_string_equal(r.programs[0].comm, "lmp");
    assert_string_equal(r.programs[0].rule, "lammps");
    assert_string_equal(r.programs[1].comm, "xmrig");
    assert_int_equal(r.programs[1].stopped, 1);
    assert_string_equal(r.programs[2].comm, "python3");
    assert_int_equal(r.programs[2].busiest, 3);
    assert_int_equal(r.programs[2].uid_count, 2);
    assert_int_equal(r.rule_count, 2);
    assert_string_equal(r.rules[0].name, "lammps");
    assert_string_equal(r.rules[0].class_name, "compute");
    assert_string_equal(r.rules[1].class_name, "forbidden");
    assert_int_equal(r.day_count, 3);
    assert_string_equal(r.days[0].date, "2026-11-10");
    assert_int_equal(r.days[0].actions[REPORT_RELEASE], 2);
    assert_int_equal(r.days[0].actions[REPORT_STOP], 2);
    assert_int_equal(r.days[0].notices[REPORT_SENT], 1);
    assert_int_equal(r.days[0].notices[REPORT_SKIPPED], 1);
    assert_int_equal(r.days[1].actions[REPORT_WARN], 2);
    assert_int_equal(r.days[2].actions[REPORT_LOWER], 1);
    assert_int_equal(r.days[2].notices[REPORT_RATE_LIMITED], 1);
    report_free(&r);
}

static void days_without_events_are_listed(void **state)
{
    (void)state;
    struct report r;
    report_init(&r, at("2026-11-01T12:00:00.000Z"), at("2026-11-08T12:00:00.000Z"));
    report_finish(&r);
    assert_int_equal(r.day_count, 8);
    assert_string_equal(r.days[0].date, "2026-11-01");
    assert_string_equal(r.days[7].date, "2026-11-08");
    report_free(&r);
}

static void text_is_escaped_and_aligned(void **state)
{
    (void)state;
    struct report r;
    build(&r);
    struct strbuf out = {0};
    report_text(&r, &out);
    assert_non_null(strstr(out.s, "loginguard report from 2026-11-10 00:00 to 2026-11-13 00:00 "
                                  "(local time): 13 events\n"));
    assert_non_null(strstr(out.s, "alice           2000000101           2         2h30m"));
    assert_non_null(strstr(out.s, "a,b\"c<script>\\x1b[31m\\x0ax"));
    assert_null(strchr(out.s, '\x1b'));
    assert_non_null(strstr(out.s, "\nUsers who came back after their level ended\n"));
    strbuf_free(&out);
    report_free(&r);
}

static void csv_quotes_by_rfc_4180(void **state)
{
    (void)state;
    struct report r;
    build(&r);
    struct strbuf out = {0};
    report_csv(&r, REPORT_PROGRAMS, &out);
    assert_string_equal(out.s, "program,stopped,would_stop,busiest,users,rule,exe\r\n"
                               "lmp,1,0,0,1,lammps,/opt/lmp\r\n"
                               "xmrig,1,0,0,1,xmrig,/home/bob/xmrig\r\n"
                               "python3,0,0,3,2,,/usr/bin/python3\r\n"
                               "\"a,b\"\"c<script>\\x1b[31m\\x0ax\",0,0,1,1,,/tmp/x y\r\n");
    strbuf_free(&out);
    report_csv(&r, REPORT_USERS, &out);
    assert_non_null(strstr(out.s, "user,uid,violations,limited_s,would_limit_s,"));
    assert_non_null(strstr(out.s, "\r\nalice,2000000101,2,9000,0,2,0,1,2\r\n"));
    strbuf_free(&out);
    report_free(&r);
}

static void json_reads_back(void **state)
{
    (void)state;
    struct report r;
    build(&r);
    struct strbuf out = {0};
    report_json(&r, &out);
    json_error_t err;
    json_t *o = json_loads(out.s, 0, &err);
    assert_non_null(o);
    assert_int_equal(json_integer_value(json_object_get(o, "events")), 13);
    json_t *alice = json_array_get(json_object_get(o, "users"), 0);
    assert_int_equal(json_integer_value(json_object_get(alice, "limited_s")), 9000);
    assert_int_equal(json_array_size(json_object_get(alice, "limited")), 3);
    json_t *prog = json_array_get(json_object_get(o, "programs"), 3);
    assert_string_equal(json_string_value(json_object_get(prog, "program")),
                        "a,b\"c<script>\x1b[31m\nx");
    json_t *back = json_array_get(json_object_get(o, "returns"), 0);
    assert_string_equal(json_string_value(json_object_get(back, "last_return")),
                        "2026-11-12T23:30:00Z");
    assert_true(json_is_null(json_object_get(json_array_get(json_object_get(o, "users"), 2),
                                             "user")));
    json_decref(o);
    strbuf_free(&out);
    report_free(&r);
}

static void html_is_escaped_without_script_or_fetch(void **state)
{
    (void)state;
    struct report r;
    build(&r);
    static const unsigned char png[] = "\x89PNG";
    struct report_image user = {.png = png, .len = 4, .width = 480, .height = 150,
                                .alt = "<b>bob</b>"};
    struct report_charts charts = {.days = {.png = png, .len = 4, .width = 720, .height = 240},
                                   .users = &user, .user_count = 1};
    struct strbuf out = {0};
    report_html(&r, &charts, &out);
    assert_null(strstr(out.s, "<script"));
    assert_null(strstr(out.s, "<b>"));
    assert_non_null(strstr(out.s, "a,b&quot;c&lt;script&gt;\\x1b[31m\\x0ax"));
    assert_non_null(strstr(out.s, "alt=\"&lt;b&gt;bob&lt;/b&gt;\""));
    assert_non_null(strstr(out.s, "src=\"data:image/png;base64,iVBORw==\""));
    assert_non_null(strstr(out.s, "default-src 'none'"));
    /* Nothing from elsewhere: every src is a data: URI, no href. */
    for (const char *p = out.s; (p = strstr(p, "src=\"")); p++)
        assert_memory_equal(p + 5, "data:", 5);
    assert_null(strstr(out.s, "href"));
    strbuf_free(&out);
    report_free(&r);
}

/* One short run of the daemon, as the events of a log: each event is
 * "TIME EVENT [FIELDS]" with TIME in seconds after 10:00:00 on
 * 2026-11-20 (UTC); the report's range runs to 10:05:00 (the moment
 * the report is asked for), long after the daemon stopped. */
#define RUN_DAY "2026-11-20T10:"
static void build_run(struct report *r, const char *const *lines, size_t n)
{
    report_init(r, at(RUN_DAY "00:00.000Z"), at(RUN_DAY "05:00.000Z"));
    for (size_t i = 0; i < n; i++) {
        uint64_t time;
        json_t *e = event_parse_line(lines[i], strlen(lines[i]), &time);
        assert_non_null(e);
        report_add(r, e, time);
        json_decref(e);
    }
    report_finish(r);
}

#define RUN_EVENT(mmss, name, fields)                                                           \
    "{\"time\":\"" RUN_DAY mmss ".000Z\",\"event\":\"" name "\",\"user\":\"alice\","             \
    "\"uid\":2000000101" fields "}"
/* Throttled for 10 minutes from 10:00:10. */
#define RUN_VIOLATION(mode, applied)                                                             \
    RUN_EVENT("00:10", "violation", ",\"level_after\":1,\"level\":" L2 ",\"until\":\"" RUN_DAY  \
              "10:10.000Z\",\"action\":\"limit\",\"applied\":" applied ",\"mode\":\"" mode "\","  \
              "\"usage\":{\"cpu_cores\":3},\"processes\":" PROC("\"sim\"", "\"/opt/sim\""))
#define RUN_STOPPED(mmss) "{\"time\":\"" RUN_DAY mmss ".000Z\",\"event\":\"daemon_stopped\"}"
#define RUN_LIMITS(mmss, level) RUN_EVENT(mmss, "limits_set", ",\"level\":" level)

/* The case: a 45-second observe-mode run, the report asked for
 * minutes later.  Nothing was limited or stopped: the violation and the
 * forbidden program are what would have been done, and the time limits
 * would have held ends with the daemon. */
static void observe_mode_is_what_would_have_been_done(void **state)
{
    (void)state;
    static const char *const run[] = {
        RUN_VIOLATION("observe", "false"),
        RUN_EVENT("00:20", "forbidden_process",
                  ",\"reason\":\"xmrig\",\"action\":\"stop\",\"applied\":false,\"mode\":\"observe\","
                  "\"processes\":[{\"comm\":\"xmrig\",\"exe\":\"/tmp/xmrig\",\"rule\":\"xmrig\"}]"),
        RUN_STOPPED("00:45"),
    };
    struct report r;
    build_run(&r, run, sizeof(run) / sizeof(run[0]));
    assert_int_equal(r.user_count, 1);
    assert_int_equal(r.users[0].violations, 1);
    assert_int_equal(r.users[0].limited_usec, 0);
    assert_int_equal(r.users[0].span_count, 0);
    assert_int_equal(r.users[0].would_limit_usec, 35 * USEC_PER_SEC);
    assert_int_equal(r.days[0].actions[REPORT_LIMIT], 0);
    assert_int_equal(r.days[0].actions[REPORT_STOP], 0);
    assert_int_equal(r.days[0].would[REPORT_LIMIT], 1);
    assert_int_equal(r.days[0].would[REPORT_STOP], 1);
    const struct report_program *xmrig = &r.programs[0];
    assert_string_equal(xmrig->comm, "xmrig");
    assert_int_equal(xmrig->stopped, 0);
    assert_int_equal(xmrig->would_stop, 1);
    struct strbuf out = {0};
    report_csv(&r, REPORT_USERS, &out);
    assert_non_null(strstr(out.s, "\r\nalice,2000000101,1,0,35,1,1,0,0\r\n"));
    strbuf_free(&out);
    report_free(&r);
}

/* Enforce mode: the limits end when the daemon stops, not at the
 * level's until nor at the report's end. */
static void limited_time_ends_at_daemon_stop(void **state)
{
    (void)state;
    static const char *const run[] = {RUN_VIOLATION("enforce", "true"), RUN_STOPPED("00:45")};
    struct report r;
    build_run(&r, run, sizeof(run) / sizeof(run[0]));
    assert_int_equal(r.users[0].limited_usec, 35 * USEC_PER_SEC);
    assert_int_equal(r.users[0].span_count, 1);
    assert_int_equal(r.users[0].would_limit_usec, 0);
    assert_int_equal(r.days[0].actions[REPORT_LIMIT], 1);
    assert_int_equal(r.days[0].would[REPORT_LIMIT], 0);
    report_free(&r);
}

/* The restarted daemon puts the level's limits back (limits_set at the
 * level): they hold again from then until their end. */
static void limited_time_resumes_with_the_restarted_daemons_limits(void **state)
{
    (void)state;
    static const char *const run[] = {
        RUN_VIOLATION("enforce", "true"), RUN_STOPPED("00:45"),
        "{\"time\":\"" RUN_DAY "01:00.000Z\",\"event\":\"daemon_started\"}",
        RUN_LIMITS("01:00", "1"), RUN_STOPPED("02:00"),
        /* A restart after the level's end puts nothing back. */
        RUN_LIMITS("03:00", "0"),
    };
    struct report r;
    build_run(&r, run, sizeof(run) / sizeof(run[0]));
    assert_int_equal(r.users[0].limited_usec, (35 + 60) * USEC_PER_SEC);
    assert_int_equal(r.users[0].span_count, 2);
    report_free(&r);
}

/* An exemption lifts the level's limits (the share alone) and its end
 * puts them back; a release (the level's expiry) and a forgive end them. */
static void limited_time_ends_at_release_expiry_and_forgive(void **state)
{
    (void)state;
    static const char *const run[] = {
        RUN_VIOLATION("enforce", "true"),
        RUN_LIMITS("00:20", "0"),  /* exempt for 10 s */
        RUN_LIMITS("00:30", "1"),  /* the exemption ended */
        RUN_EVENT("01:30", "user_forgiven", ",\"level_before\":1"),
        RUN_LIMITS("01:30", "0"),
        RUN_LIMITS("02:00", "1"),  /* no level: nothing to put back */
    };
    struct report r;
    build_run(&r, run, sizeof(run) / sizeof(run[0]));
    assert_int_equal(r.users[0].limited_usec, (10 + 60) * USEC_PER_SEC);
    report_free(&r);
    static const char *const expired[] = {
        RUN_VIOLATION("enforce", "true"),
        RUN_EVENT("00:40", "level_expired", ",\"action\":\"release\",\"applied\":true"),
    };
    build_run(&r, expired, sizeof(expired) / sizeof(expired[0]));
    assert_int_equal(r.users[0].limited_usec, 30 * USEC_PER_SEC);
    assert_int_equal(r.days[0].actions[REPORT_RELEASE], 1);
    report_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(users_by_violations_time_limited_and_returns),
        cmocka_unit_test(programs_rules_and_days),
        cmocka_unit_test(days_without_events_are_listed),
        cmocka_unit_test(text_is_escaped_and_aligned),
        cmocka_unit_test(csv_quotes_by_rfc_4180),
        cmocka_unit_test(json_reads_back),
        cmocka_unit_test(html_is_escaped_without_script_or_fetch),
        cmocka_unit_test(observe_mode_is_what_would_have_been_done),
        cmocka_unit_test(limited_time_ends_at_daemon_stop),
        cmocka_unit_test(limited_time_resumes_with_the_restarted_daemons_limits),
        cmocka_unit_test(limited_time_ends_at_release_expiry_and_forgive),
    };
    return cmocka_run_group_tests(tests, utc, NULL);
}
