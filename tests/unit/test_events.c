#include "config.h"

#include <signal.h>
#include <sys/resource.h>

#include "event_lines.h"
#include "record/events.h"
#include "testutil.h"
#include "units.h"

static void test_bytes_to_json(void **state)
{
    (void)state;
    json_t *j = json_from_bytes("caf\xc3\xa9", 5);
    assert_string_equal(json_string_value(j), "caf\xc3\xa9");
    json_decref(j);
    /* Invalid UTF-8, an overlong form, a surrogate and a NUL become text. */
    j = json_from_bytes("a\xff" "b\xc0\xaf" "c\xed\xa0\x80" "d\0e", 12);
    assert_string_equal(json_string_value(j), "a\\xffb\\xc0\\xafc\\xed\\xa0\\x80d\\x00e");
    json_decref(j);
    /* A truncated sequence at the end. */
    j = json_from_bytes("x\xe2\x82", 3);
    assert_string_equal(json_string_value(j), "x\\xe2\\x82");
    json_decref(j);
}

static void test_violation_event(void **state)
{
    (void)state;
    struct policy p;
    policy_init_defaults(&p);
    struct snapshot snap = {0};
    snap.now = 1700000000ULL * USEC_PER_SEC;
    snap.interval = 2 * USEC_PER_SEC;
    struct proc_sample *ps = snapshot_add_proc(&snap);
    ps->pid = 4242;
    snprintf(ps->comm, sizeof(ps->comm), "x\nBcc: a@b");
    ps->exe = strdup("/home/alice/bin/sim");
    static const char argv[] = "sim\0--name=\xff\0$(rm -rf ~)";
    ps->argv = malloc(sizeof(argv));
    memcpy(ps->argv, argv, sizeof(argv));
    ps->argv_len = sizeof(argv) - 1;
    ps->cpu = 1.98765;
    ps->rss = 1 << 20;

    struct decision d = {.kind = DECISION_VIOLATION, .uid = 1001, .level_before = 1,
                         .level_after = 2, .reason = "cpu", .cpu = 2.5, .memory = 3ULL << 30,
                         .window = 300 * USEC_PER_SEC, .until = snap.now + 1800 * USEC_PER_SEC,
                         .proc_count = 1};
    json_t *e = event_from_decision(&p, &d, &snap, "alice", "login1", snap.now, false);
    char *text = json_dumps(e, JSON_COMPACT);
    json_error_t err;
    json_t *back = json_loads(text, 0, &err);
    assert_non_null(back);
    assert_string_equal(json_string_value(json_object_get(back, "event")), "violation");
    assert_string_equal(json_string_value(json_object_get(back, "time")),
                        "2023-11-14T22:13:20.000Z");
    assert_string_equal(json_string_value(json_object_get(back, "until")),
                        "2023-11-14T22:43:20.000Z");
    assert_string_equal(json_string_value(json_object_get(back, "user")), "alice");
    assert_int_equal(json_integer_value(json_object_get(back, "uid")), 1001);
    assert_int_equal(json_integer_value(json_object_get(back, "level_after")), 2);
    json_t *level = json_object_get(back, "level");
    assert_string_equal(json_string_value(json_object_get(level, "name")), "throttled");
    assert_string_equal(json_string_value(json_object_get(back, "action")), "limit");
    assert_string_equal(json_string_value(json_object_get(back, "mode")), "observe");
    assert_true(json_is_false(json_object_get(back, "applied")));
    json_t *usage = json_object_get(back, "usage");
    assert_true(json_real_value(json_object_get(usage, "window_s")) == 300.0);
    json_t *proc = json_array_get(json_object_get(back, "processes"), 0);
    assert_int_equal(json_integer_value(json_object_get(proc, "pid")), 4242);
    assert_string_equal(json_string_value(json_object_get(proc, "comm")), "x\nBcc: a@b");
    json_t *args = json_object_get(proc, "argv");
    assert_int_equal(json_array_size(args), 3);
    assert_string_equal(json_string_value(json_array_get(args, 1)), "--name=\\xff");
    assert_string_equal(json_string_value(json_array_get(args, 2)), "$(rm -rf ~)");
    /* The newline is escaped in the file: one event, one line. */
    assert_null(strchr(text, '\n'));

    char summary[1024];
    event_summary(e, summary, sizeof(summary));
    assert_null(strchr(summary, '\n'));
    assert_non_null(strstr(summary, "violation: user alice uid 1001 level 1 -> 2"));
    assert_non_null(strstr(summary, "top: pid 4242 x\\x0aBcc: a@b (1.99 cores)"));

    free(text);
    json_decref(back);
    json_decref(e);
    snapshot_free(&snap);
    policy_free(&p);
}

static void test_action_summaries(void **state)
{
    (void)state;
    char buf[512];
    json_t *e = event_action("limits_set", 1001, "alice", "enforce", "h", 0);
    json_object_set_new(e, "limits", json_from_limits(0.5, 4ULL << 30, 1024));
    json_object_set_new(e, "level", json_integer(2));
    event_summary(e, buf, sizeof(buf));
    assert_string_equal(buf, "limits_set: user alice uid 1001: limits cpu 0.50 cores, "
                             "memory 4.0G, tasks 1024 (level 2)");
    json_decref(e);
    e = event_action("process_stopping", 1001, "alice", "enforce", "h", 0);
    json_object_set_new(e, "process", json_pack("{s:i, s:s, s:s}", "pid", 42, "comm",
                                                 "x\nBcc: y", "exe", "/home/alice/x"));
    json_object_set_new(e, "signal", json_string("SIGTERM"));
    event_summary(e, buf, sizeof(buf));
    assert_string_equal(buf, "process_stopping: user alice uid 1001: pid 42 x\\x0aBcc: y "
                             "(/home/alice/x) SIGTERM");
    json_decref(e);
}

static void test_event_log_appends_lines(void **state)
{
    (void)state;
    make_test_dir();
    char path[256];
    snprintf(path, sizeof(path), "%s/events.jsonl", test_dir);
    struct event_log log;
    assert_int_equal(event_log_open(&log, path, false), 0);
    event_log_write(&log, event_daemon("daemon_started", "one", NULL, "h", 0));
    /* After logrotate moved the file away, a reopen starts a new one. */
    char moved[300];
    snprintf(moved, sizeof(moved), "%s.1", path);
    rename(path, moved);
    assert_int_equal(event_log_reopen(&log, path), 0);
    event_log_write(&log, event_daemon("config_reloaded", NULL, NULL, "h", 0));
    event_log_close(&log);
    char buf[512];
    FILE *f = fopen(moved, "r");
    assert_non_null(fgets(buf, sizeof(buf), f));
    assert_non_null(strstr(buf, "\"event\":\"daemon_started\""));
    fclose(f);
    f = fopen(path, "r");
    assert_non_null(fgets(buf, sizeof(buf), f));
    assert_non_null(strstr(buf, "\"event\":\"config_reloaded\""));
    fclose(f);
    /* A symlink where the log should be is refused, not followed. */
    unlink(path);
    assert_int_equal(symlink("/etc/passwd", path), 0);
    assert_int_equal(event_log_open(&log, path, false), -1);
    event_log_close(&log);
    remove_test_dir();
}

/* A process for a decision's event: comm, exe, and a command line of
 * total bytes of which the first kept (at most ARGV_KEEP) are known,
 * made of unit repeated. */
static struct proc_sample *hostile_proc(struct snapshot *snap, const char *exe, const char *unit,
                                        size_t total)
{
    struct proc_sample *ps = snapshot_add_proc(snap);
    ps->pid = 4000 + (pid_t)snap->proc_count;
    snprintf(ps->comm, sizeof(ps->comm), "x\xff\x1b");
    ps->exe = strdup(exe);
    size_t kept = total < ARGV_KEEP ? total : ARGV_KEEP, u = strlen(unit);
    ps->argv = malloc(kept + 1);
    for (size_t i = 0; i < kept; i++)
        ps->argv[i] = unit[i % u];
    ps->argv[kept] = '\0';
    ps->argv_len = kept;
    ps->argv_total = total;
    memset(ps->argv_sha256, 'a', 64);
    ps->argv_sha256[64] = '\0';
    ps->cpu = 1;
    ps->class = CLASS_FORBIDDEN;
    ps->rule = "test-miner";
    return ps;
}

static json_t *decision_event(const struct snapshot *snap, char **line)
{
    struct policy p;
    policy_init_defaults(&p);
    struct decision d = {.kind = DECISION_FORBIDDEN, .uid = 1001, .reason = "test-miner",
                         .proc_count = snap->proc_count};
    for (size_t i = 0; i < snap->proc_count; i++)
        d.procs[i] = i;
    json_t *e = event_from_decision(&p, &d, snap, "alice", "h", snap->now, false);
    *line = json_dumps(e, JSON_COMPACT | JSON_REAL_PRECISION(6));
    policy_free(&p);
    return e;
}

/* The bytes a JSON value takes in a line. */
static size_t written_len(const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    size_t n = strlen(text);
    free(text);
    return n;
}

static void test_argv_in_events_is_bounded(void **state)
{
    (void)state;
    /* Each kind of command line a user can choose to make an event big:
     * long, many tiny arguments, bytes that take five or six bytes each
     * once escaped, quotes. */
    static const struct {
        const char *unit;
        size_t total;
    } lines[] = {
        {"_train", 32768}, {"x", 32768}, {"\xff", 32768}, {"\x01", 32768}, {"\"\\", 32768},
        {"\xc3\xa9", 32768},
    };
    for (size_t k = 0; k < sizeof(lines) / sizeof(lines[0]); k++) {
        struct snapshot snap = {0};
        snap.now = 1700000000ULL * USEC_PER_SEC;
        hostile_proc(&snap, "/home/alice/bin/sim", lines[k].unit, lines[k].total);
        char *line;
        json_t *e = decision_event(&snap, &line);
        json_t *proc = json_array_get(json_object_get(e, "processes"), 0);
        json_t *argv = json_object_get(proc, "argv");
        assert_true(written_len(argv) <= EVENT_ARGV_MAX + 2);
        assert_true(json_array_size(argv) >= 1);
        /* What it still is known by: its whole length and digest. */
        assert_int_equal(json_integer_value(json_object_get(proc, "argv_bytes")), 32768);
        assert_int_equal(strlen(json_string_value(json_object_get(proc, "argv_sha256"))), 64);
        assert_true(json_is_true(json_object_get(proc, "argv_truncated")));
        /* A cut falls between characters: no half of an é is shown. */
        if (strcmp(lines[k].unit, "\xc3\xa9") == 0)
            assert_null(strstr(json_string_value(json_array_get(argv, 0)), "\\x"));
        assert_true(strlen(line) < 2 * EVENT_ARGV_MAX + 1024);
        free(line);
        json_decref(e);
        snapshot_free(&snap);
    }
}

static void test_short_argv_is_whole(void **state)
{
    (void)state;
    struct snapshot snap = {0};
    struct proc_sample *ps = hostile_proc(&snap, "/usr/bin/python3", "x", 9);
    static const char argv[] = "sim\0-n\0\xff";
    memcpy(ps->argv, argv, sizeof(argv));
    ps->argv_len = ps->argv_total = sizeof(argv) - 1;
    char *line;
    json_t *e = decision_event(&snap, &line);
    json_t *proc = json_array_get(json_object_get(e, "processes"), 0);
    json_t *args = json_object_get(proc, "argv");
    assert_int_equal(json_array_size(args), 3);
    assert_string_equal(json_string_value(json_array_get(args, 2)), "\\xff");
    assert_int_equal(json_integer_value(json_object_get(proc, "argv_bytes")), 8);
    assert_true(json_is_false(json_object_get(proc, "argv_truncated")));
    assert_null(json_object_get(proc, "exe_truncated"));
    free(line);
    json_decref(e);
    /* Not read at all: nothing shown, nothing claimed. */
    free(ps->argv);
    ps->argv = NULL;
    ps->argv_len = ps->argv_total = 0;
    ps->argv_sha256[0] = '\0';
    e = decision_event(&snap, &line);
    proc = json_array_get(json_object_get(e, "processes"), 0);
    assert_int_equal(json_array_size(json_object_get(proc, "argv")), 0);
    assert_true(json_is_null(json_object_get(proc, "argv_bytes")));
    assert_true(json_is_null(json_object_get(proc, "argv_sha256")));
    assert_true(json_is_false(json_object_get(proc, "argv_truncated")));
    free(line);
    json_decref(e);
    snapshot_free(&snap);
}

/* The largest event a user can make: a violation lists TOP_PROCS
 * processes, each with a hostile path and command line. */
static void test_largest_event_is_bounded(void **state)
{
    (void)state;
    char exe[4096];
    memset(exe, 0xff, sizeof(exe) - 1);
    exe[0] = '/';
    exe[sizeof(exe) - 1] = '\0';
    struct snapshot snap = {0};
    for (int i = 0; i < TOP_PROCS; i++)
        hostile_proc(&snap, exe, "\x01", 32768);
    char *line;
    json_t *e = decision_event(&snap, &line);
    json_t *procs = json_object_get(e, "processes");
    assert_int_equal(json_array_size(procs), TOP_PROCS);
    json_t *proc = json_array_get(procs, 0);
    assert_true(json_is_true(json_object_get(proc, "exe_truncated")));
    assert_true(written_len(json_object_get(proc, "exe")) <= EVENT_EXE_MAX + 2);
    assert_true(strlen(line) < TOP_PROCS * (EVENT_ARGV_MAX + EVENT_EXE_MAX + 512) + 1024);
    /* What a reader of the log (loginguardctl events) accepts, with room. */
    print_message("the largest event line: %zu bytes (readers accept %d)\n", strlen(line),
                  EVENT_LINE_MAX);
    assert_true(strlen(line) * 2 < EVENT_LINE_MAX);
    free(line);
    json_decref(e);
    snapshot_free(&snap);
}

/* Every class of text that acts on a terminal or turns a line around is
 * shown as \xNN in the syslog and terminal summary. */
static void test_summary_escapes_acting_text(void **state)
{
    (void)state;
    static const struct {
        const char *raw, *shown;
    } cases[] = {
        {"a\x1b[2Jb", "a\\x1b[2Jb"},                 /* C0: ESC */
        {"a\x7f" "b", "a\\x7fb"},                   /* DEL */
        {"a\xc2\x9b" "1mb", "a\\xc2\\x9b1mb"},      /* C1: CSI */
        {"a\xc2\x85" "b", "a\\xc2\\x85b"},          /* C1: NEL */
        {"a\xe2\x80\xae" "b", "a\\xe2\\x80\\xaeb"}, /* RLO */
        {"a\xe2\x80\xaa" "b", "a\\xe2\\x80\\xaab"}, /* LRE */
        {"a\xe2\x81\xa6" "b", "a\\xe2\\x81\\xa6b"}, /* LRI */
        {"a\xe2\x81\xa9" "b", "a\\xe2\\x81\\xa9b"}, /* PDI */
        {"a\xe2\x80\x8e" "b", "a\\xe2\\x80\\x8eb"}, /* LRM */
        {"a\xe2\x80\x8f" "b", "a\\xe2\\x80\\x8fb"}, /* RLM */
        {"a\xd8\x9c" "b", "a\\xd8\\x9cb"},          /* ALM */
        {"r\xc3\xa9sum\xc3\xa9 \xc2\xa0", "r\xc3\xa9sum\xc3\xa9 \xc2\xa0"}, /* text stays */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[512], want[512];
        json_t *e = event_action("process_stopping", 1001, "alice", "enforce", "h", 0);
        json_object_set_new(e, "process", json_pack("{s:i, s:o, s:s}", "pid", 42, "comm",
                                                     json_from_bytes(cases[i].raw,
                                                                     strlen(cases[i].raw)),
                                                     "exe", "/x"));
        event_summary(e, buf, sizeof(buf));
        snprintf(want, sizeof(want), "process_stopping: user alice uid 1001: pid 42 %s (/x)",
                 cases[i].shown);
        assert_string_equal(buf, want);
        json_decref(e);
        /* A daemon event's message, and bytes that are not UTF-8 there. */
        e = event_daemon("config_error", cases[i].raw, NULL, "h", 0);
        event_summary(e, buf, sizeof(buf));
        snprintf(want, sizeof(want), "config_error: %s", cases[i].shown);
        assert_string_equal(buf, want);
        json_decref(e);
    }
    char buf[64];
    json_t *e = event_daemon("config_error", "a\xff" "b", NULL, "h", 0);
    event_summary(e, buf, sizeof(buf));
    assert_string_equal(buf, "config_error: a\\xffb");
    json_decref(e);
}

static char *read_all_text(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The lines of text, each parsed: every line must be one JSON object. */
static size_t parse_lines(char *text, json_t **out, size_t max)
{
    size_t n = 0;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        json_error_t err;
        json_t *j = json_loads(l, 0, &err);
        if (!j)
            fail_msg("not a JSON line: '%s' (%s)", l, err.text);
        assert_true(n < max);
        out[n++] = j;
    }
    return n;
}

static json_t *forbidden(uid_t uid, const char *user)
{
    json_t *e = event_action("forbidden_process", uid, user, "observe", "h", 0);
    json_object_set_new(e, "message", json_string("padding to make the line longer than the "
                                                  "room left on the disk, which is small"));
    return e;
}

static void test_event_log_survives_a_full_disk(void **state)
{
    (void)state;
    make_test_dir();
    char path[256];
    snprintf(path, sizeof(path), "%s/events.jsonl", test_dir);
    /* The terminal the daemon says things on in the foreground: a pipe,
     * which no file size limit applies to. */
    fflush(stderr);
    int saved_stderr = dup(2), said_pipe[2];
    assert_int_equal(pipe(said_pipe), 0);
    dup2(said_pipe[1], 2);
    close(said_pipe[1]);

    struct event_log log;
    assert_int_equal(event_log_open(&log, path, true), 0);
    event_log_write(&log, event_daemon("daemon_started", "one", NULL, "h", 0));
    /* The file system fills up: a file size limit does it for one
     * process, cutting the next write short and failing the rest. */
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    struct rlimit old, full;
    getrlimit(RLIMIT_FSIZE, &old);
    full = old;
    full.rlim_cur = (rlim_t)sb.st_size + 40;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &full), 0);
    for (int i = 0; i < 3; i++)
        event_log_write(&log, forbidden(1001, "alice"));
    event_log_tick(&log, false); /* still full: nothing */
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    /* Room again: the next sample says what was lost, then goes on. */
    event_log_tick(&log, false);
    event_log_write(&log, event_daemon("config_reloaded", NULL, NULL, "h", 0));
    assert_int_equal(log.lost_total, 3); /* for the metrics: stays when the count is said */
    event_log_close(&log);
    signal(SIGXFSZ, SIG_DFL);
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    static char said[1 << 16];
    ssize_t got = read(said_pipe[0], said, sizeof(said) - 1);
    close(said_pipe[0]);
    assert_true(got > 0);
    said[got] = '\0';

    json_t *lines[8];
    size_t n = parse_lines(read_all_text(path), lines, 8);
    assert_int_equal(n, 3);
    assert_string_equal(json_string_value(json_object_get(lines[0], "event")), "daemon_started");
    assert_string_equal(json_string_value(json_object_get(lines[1], "event")), "events_lost");
    assert_int_equal(json_integer_value(json_object_get(lines[1], "lost")), 3);
    assert_non_null(json_string_value(json_object_get(lines[1], "since")));
    assert_string_equal(json_string_value(json_object_get(lines[2], "event")), "config_reloaded");
    for (size_t i = 0; i < n; i++)
        json_decref(lines[i]);
    /* Said once, on the terminal as in syslog. */
    const char *first = strstr(said, "cannot write the event log");
    assert_non_null(first);
    assert_null(strstr(first + 1, "cannot write the event log"));
    assert_non_null(strstr(said, "events_lost: 3 events could not be written"));
    remove_test_dir();
}

/* A line cut short that could not be taken back: the next line still
 * starts on a line of its own. */
static void test_next_line_after_a_cut_one_starts_afresh(void **state)
{
    (void)state;
    make_test_dir();
    char path[256];
    snprintf(path, sizeof(path), "%s/events.jsonl", test_dir);
    /* What a short write leaves when the file cannot be truncated, found
     * when the log is opened (at start, at a SIGHUP). */
    write_file("events.jsonl", "{\"event\":\"daemon_started\"}\n{\"event\":\"cut");
    struct event_log log;
    assert_int_equal(event_log_open(&log, path, false), 0);
    event_log_write(&log, event_daemon("daemon_started", NULL, NULL, "h", 0));
    event_log_write(&log, event_daemon("config_reloaded", NULL, NULL, "h", 0));
    event_log_close(&log);
    const char *text = read_all_text(path);
    assert_non_null(strstr(text, "{\"event\":\"cut\n{\"time\""));
    assert_non_null(strstr(text, "\"daemon_started\"}\n{\"time\""));
    remove_test_dir();
}

static void test_user_events_are_rate_limited(void **state)
{
    (void)state;
    make_test_dir();
    char path[256];
    snprintf(path, sizeof(path), "%s/events.jsonl", test_dir);
    struct event_log log;
    assert_int_equal(event_log_open(&log, path, false), 0);
    event_log_set_limit(&log, 2, 3600 * USEC_PER_SEC);
    for (int i = 0; i < 5; i++)
        event_log_write(&log, forbidden(1001, "alice"));
    event_log_write(&log, event_action("notice", 1001, "alice", "observe", "h", 0));
    event_log_write(&log, forbidden(1002, "bob"));
    /* Never held back: level changes, limits, the daemon's own events. */
    json_t *v = event_action("violation", 1001, "alice", "observe", "h", 0);
    event_log_write(&log, v);
    event_log_write(&log, event_action("limits_set", 1001, "alice", "enforce", "h", 0));
    event_log_write(&log, event_daemon("config_reloaded", NULL, NULL, "h", 0));
    event_log_tick(&log, false); /* the interval has not ended */
    event_log_tick(&log, true);  /* the daemon stops */
    assert_int_equal(log.suppressed_total, 4); /* for the metrics */
    event_log_close(&log);

    json_t *lines[16];
    size_t n = parse_lines(read_all_text(path), lines, 16);
    const char *want[] = {"forbidden_process", "forbidden_process", "forbidden_process",
                          "violation", "limits_set", "config_reloaded", "events_suppressed"};
    assert_int_equal(n, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < n; i++)
        assert_string_equal(json_string_value(json_object_get(lines[i], "event")), want[i]);
    assert_int_equal(json_integer_value(json_object_get(lines[2], "uid")), 1002);
    json_t *s = lines[n - 1];
    assert_int_equal(json_integer_value(json_object_get(s, "uid")), 1001);
    assert_string_equal(json_string_value(json_object_get(s, "user")), "alice");
    assert_string_equal(json_string_value(json_object_get(s, "mode")), "observe");
    assert_int_equal(json_integer_value(json_object_get(s, "total")), 4);
    json_t *held = json_object_get(s, "held");
    assert_int_equal(json_object_size(held), 2);
    assert_int_equal(json_integer_value(json_object_get(held, "forbidden_process")), 3);
    assert_int_equal(json_integer_value(json_object_get(held, "notice")), 1);
    assert_int_equal(json_integer_value(json_object_get(s, "interval_s")), 3600);
    char buf[512];
    event_summary(s, buf, sizeof(buf));
    assert_non_null(strstr(buf, "events_suppressed: user alice uid 1001: 4 held back since "));
    assert_non_null(strstr(buf, "(forbidden_process 3, notice 1)"));
    for (size_t i = 0; i < n; i++)
        json_decref(lines[i]);
    remove_test_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bytes_to_json),
        cmocka_unit_test(test_violation_event),
        cmocka_unit_test(test_action_summaries),
        cmocka_unit_test(test_event_log_appends_lines),
        cmocka_unit_test(test_argv_in_events_is_bounded),
        cmocka_unit_test(test_short_argv_is_whole),
        cmocka_unit_test(test_largest_event_is_bounded),
        cmocka_unit_test(test_summary_escapes_acting_text),
        cmocka_unit_test(test_event_log_survives_a_full_disk),
        cmocka_unit_test(test_next_line_after_a_cut_one_starts_afresh),
        cmocka_unit_test(test_user_events_are_rate_limited),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
