/* Following the event log (loginguardctl events --follow) through what
 * logrotate does to it, on real files and real inotify. */
#include "config.h"

#include <errno.h>

#include "base/environment.h"
#include "event_follow.h"
#include "seen_lines.h"
#include "testutil.h"

/* A bound on each wait: inotify wakes the follower at once, so only a
 * broken follower waits this long. */
#define WAIT_MS 5000

static char log_path[256];

static const char *at(const char *name)
{
    static char path[256];
    snprintf(path, sizeof(path), "%s/%s", test_dir, name);
    return path;
}

static void append(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0640);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* Step until n lines are seen (each wait bounded). */
static void wait_lines(struct event_follow *f, struct seen *s, size_t n)
{
    while (s->count < n)
        assert_int_equal(event_follow_step(f, WAIT_MS), 1);
    assert_int_equal(s->count, n);
}

/* Whatever inotify still has to say changes nothing more. */
static void no_more(struct event_follow *f, struct seen *s)
{
    size_t before = s->count;
    while (event_follow_step(f, 100) == 1)
        ;
    assert_int_equal(s->count, before);
}

static int setup(void **state)
{
    (void)state;
    make_test_dir();
    snprintf(log_path, sizeof(log_path), "%s/events.jsonl", test_dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    remove_test_dir();
    return 0;
}

static void test_new_lines_only_and_whole(void **state)
{
    (void)state;
    append(log_path, "old 1\nold 2\nbeing writ");
    struct event_follow f;
    struct seen s = {0};
    assert_int_equal(event_follow_open(&f, environment_host_proc, log_path, false, collect, &s), 0);
    assert_int_equal(s.count, 0);
    /* The end of the line being written when following began is not a line. */
    append(log_path, "ten\nnew 1\n");
    wait_lines(&f, &s, 1);
    assert_string_equal(s.lines[0], "new 1");
    /* Half a line is held until its end comes. */
    append(log_path, "{\"half\":");
    no_more(&f, &s);
    append(log_path, "1}\n");
    wait_lines(&f, &s, 2);
    assert_string_equal(s.lines[1], "{\"half\":1}");
    assert_int_equal(f.dropped, 0);
    event_follow_close(&f);
    seen_free(&s);
}

static void test_from_the_start(void **state)
{
    (void)state;
    append(log_path, "one\ntwo\n");
    struct event_follow f;
    struct seen s = {0};
    assert_int_equal(event_follow_open(&f, environment_host_proc, log_path, true, collect, &s), 0);
    assert_int_equal(s.count, 2);
    assert_string_equal(s.lines[0], "one");
    event_follow_close(&f);
    seen_free(&s);
}

/* logrotate's create: the log is renamed and a new one made; the daemon
 * writes the old one until its SIGHUP reopens the path. */
static void test_rename_and_create(void **state)
{
    (void)state;
    append(log_path, "");
    struct event_follow f;
    struct seen s = {0};
    assert_int_equal(event_follow_open(&f, environment_host_proc, log_path, false, collect, &s), 0);
    append(log_path, "a\n");
    wait_lines(&f, &s, 1);
    assert_int_equal(rename(log_path, at("events.jsonl.1")), 0);
    append(log_path, ""); /* create */
    no_more(&f, &s);
    /* Before the SIGHUP: still the old file, and half a line of it. */
    append(at("events.jsonl.1"), "b\nc-ha");
    wait_lines(&f, &s, 2);
    assert_string_equal(s.lines[1], "b");
    append(at("events.jsonl.1"), "lf\n");
    wait_lines(&f, &s, 3);
    /* After it: the new file, once the old one is read to its end. */
    append(at("events.jsonl.1"), "d\n");
    append(log_path, "e\n");
    wait_lines(&f, &s, 5);
    assert_string_equal(s.lines[2], "c-half");
    assert_string_equal(s.lines[3], "d");
    assert_string_equal(s.lines[4], "e");
    assert_int_equal(f.rotations, 1);
    /* And on: writes to the new one, none from the old one. */
    append(at("events.jsonl.1"), "stray\n");
    append(log_path, "f\n");
    wait_lines(&f, &s, 6);
    assert_string_equal(s.lines[5], "f");
    no_more(&f, &s);
    /* A second rotation, the old copy deleted (rotate 0) before the new
     * file is written. */
    assert_int_equal(rename(log_path, at("events.jsonl.2")), 0);
    append(at("events.jsonl.2"), "g\n");
    append(log_path, "");
    assert_int_equal(unlink(at("events.jsonl.2")), 0);
    wait_lines(&f, &s, 7);
    append(log_path, "h\n");
    wait_lines(&f, &s, 8);
    assert_string_equal(s.lines[6], "g");
    assert_string_equal(s.lines[7], "h");
    assert_int_equal(f.rotations, 2);
    event_follow_close(&f);
    seen_free(&s);
}

/* logrotate's copytruncate: the log is copied and cut to nothing. */
static void test_copytruncate(void **state)
{
    (void)state;
    append(log_path, "");
    struct event_follow f;
    struct seen s = {0};
    assert_int_equal(event_follow_open(&f, environment_host_proc, log_path, false, collect, &s), 0);
    append(log_path, "a line of some length\n");
    wait_lines(&f, &s, 1);
    assert_int_equal(truncate(log_path, 0), 0);
    append(log_path, "b\n");
    wait_lines(&f, &s, 2);
    assert_string_equal(s.lines[1], "b");
    /* Cut and written again past where the last read ended before the
     * follower looked: no line end there, so it is read from the start. */
    int fd = open(log_path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    static const char more[] = "c 12345\nd\n";
    assert_int_equal(write(fd, more, strlen(more)), (ssize_t)strlen(more));
    close(fd);
    wait_lines(&f, &s, 4);
    assert_string_equal(s.lines[2], "c 12345");
    assert_string_equal(s.lines[3], "d");
    assert_true(f.truncations >= 2);
    event_follow_close(&f);
    seen_free(&s);
}

static void test_log_made_later(void **state)
{
    (void)state;
    struct event_follow f;
    struct seen s = {0};
    assert_int_equal(event_follow_open(&f, environment_host_proc, log_path, false, collect, &s), 0);
    append(log_path, "first\n");
    wait_lines(&f, &s, 1);
    assert_string_equal(s.lines[0], "first");
    event_follow_close(&f);
    seen_free(&s);
}

static void test_unreadable(void **state)
{
    (void)state;
    struct event_follow f;
    struct seen s = {0};
    char path[300];
    snprintf(path, sizeof(path), "%s/no/such/dir/events.jsonl", test_dir);
    assert_int_equal(event_follow_open(&f, environment_host_proc, path, false, collect, &s), -1);
    assert_int_equal(errno, ENOENT);
    event_follow_close(&f);
    if (geteuid() == 0)
        return; /* root reads anything */
    append(log_path, "x\n");
    chmod(log_path, 0);
    assert_int_equal(event_follow_open(&f, environment_host_proc, log_path, false, collect, &s), -1);
    assert_int_equal(errno, EACCES);
    event_follow_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_new_lines_only_and_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_from_the_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rename_and_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copytruncate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_made_later, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreadable, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
