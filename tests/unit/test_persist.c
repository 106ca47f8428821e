/* The daemon's files in state_dir through persist.h: what is written is
 * read back, a write that fails keeps what it held and is said once, and
 * the first write that works again is said too.  (The files' formats
 * are test_state's and test_notices'.) */
#include "config.h"

#include <jansson.h>

#include "fake_env.h"
#include "record/login_notices.h"
#include "record/persist.h"
#include "record/state.h"
#include "testutil.h"

#define UID 2000000001u

struct fixture {
    struct environment env;
    struct policy policy;
    struct event_log events;
    struct persist persist;
    struct persist_io io;
    char events_path[256];
};

static char err[1024];

/* state_dir: test_dir/dir, which the test makes or blocks. */
static void open_fixture(struct fixture *f, const char *dir)
{
    memset(f, 0, sizeof(*f));
    make_test_dir();
    fake_now = 1700000000ULL * SEC;
    environment_host(&f->env);
    f->env.realtime = fake_clock;
    f->env.boottime = fake_clock;
    policy_init_defaults(&f->policy);
    free(f->policy.state_dir);
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", test_dir, dir);
    f->policy.state_dir = strdup(path);
    snprintf(f->events_path, sizeof(f->events_path), "%s/events.log", test_dir);
    assert_int_equal(event_log_open(&f->events, f->events_path, false), 0);
    f->io = (struct persist_io){.env = &f->env, .policy = &f->policy, .events = &f->events,
                                .persist = &f->persist};
}

static void close_fixture(struct fixture *f)
{
    persist_free(&f->persist);
    event_log_close(&f->events);
    policy_free(&f->policy);
    remove_test_dir();
}

static void unblock(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", test_dir, name);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof(path), "%s/%s/state", test_dir, name);
    assert_int_equal(mkdir(path, 0700), 0);
}

static int loaded_level(const struct fixture *f, uid_t uid)
{
    struct engine_state back = {0};
    char moved[256];
    enum state_load_result r =
        state_load(f->policy.state_dir, &back, fake_now, moved, sizeof(moved), err, sizeof(err));
    assert_int_equal(r, STATE_LOADED);
    const struct user_state *us = engine_user(&back, uid, false);
    int level = us ? us->level : 0;
    engine_state_free(&back);
    return level;
}

static void give_level(struct engine_state *e, uid_t uid, int level)
{
    struct user_state *us = engine_user(e, uid, true);
    us->level = level;
    us->since = fake_now - 10 * SEC;
    us->until = fake_now + 3600 * SEC;
    us->violations = (uint32_t)level;
}

static void test_state_written_and_read_back(void **state)
{
    (void)state;
    struct fixture f;
    open_fixture(&f, "state");
    assert_int_equal(mkdir(f.policy.state_dir, 0700), 0);
    struct engine_state e = {0};
    give_level(&e, UID, 3);
    persist_save_state(&f.io, &e);
    assert_false(f.persist.state.pending);
    assert_int_equal(loaded_level(&f, UID), 3);
    /* Written as it goes: no news. */
    assert_int_equal(count_logged(f.events_path, "state_error", (uid_t)-1), 0);
    assert_int_equal(count_logged(f.events_path, "state_written", (uid_t)-1), 0);
    engine_state_free(&e);
    close_fixture(&f);
}

static void test_state_failing_said_once(void **state)
{
    (void)state;
    struct fixture f;
    open_fixture(&f, "blocked/state");
    block("blocked");
    struct engine_state e = {0};
    give_level(&e, UID, 2);
    for (int i = 0; i < 3; i++) {
        fake_now += 5 * SEC;
        persist_save_state(&f.io, &e);
        assert_true(f.persist.state.pending);
    }
    assert_int_equal(f.persist.state.failures, 3);
    assert_int_equal(count_logged(f.events_path, "state_error", (uid_t)-1), 1);
    assert_int_equal(count_logged(f.events_path, "state_written", (uid_t)-1), 0);

    unblock("blocked");
    give_level(&e, UID, 4); /* what memory holds now is what is written */
    persist_save_state(&f.io, &e);
    assert_false(f.persist.state.pending);
    assert_int_equal(count_logged(f.events_path, "state_error", (uid_t)-1), 1);
    assert_int_equal(count_logged(f.events_path, "state_written", (uid_t)-1), 1);
    assert_int_equal(loaded_level(&f, UID), 4);
    /* Working on: nothing more said. */
    persist_save_state(&f.io, &e);
    assert_int_equal(count_logged(f.events_path, "state_written", (uid_t)-1), 1);
    engine_state_free(&e);
    close_fixture(&f);
}

static void test_notice_rate_failing_then_pending(void **state)
{
    (void)state;
    struct fixture f;
    open_fixture(&f, "blocked/state");
    block("blocked");
    struct notice_rate rate = {0};
    notice_rate_note(&rate, UID, NOTICE_THROTTLED, fake_now);
    persist_save_notice_rate(&f.io, &rate);
    assert_true(f.persist.rate.pending);
    persist_save_pending(&f.io, &rate);
    assert_true(f.persist.rate.pending);
    assert_int_equal(count_logged(f.events_path, "state_error", (uid_t)-1), 1);

    unblock("blocked");
    persist_save_pending(&f.io, &rate);
    assert_false(f.persist.rate.pending);
    assert_int_equal(count_logged(f.events_path, "state_written", (uid_t)-1), 1);
    struct notice_rate back = {0};
    assert_int_equal(notice_rate_load(&back, f.policy.state_dir, err, sizeof(err)), 0);
    assert_false(notice_rate_due(&back, UID, NOTICE_THROTTLED, fake_now, 3600 * SEC));
    notice_rate_free(&back);
    notice_rate_free(&rate);
    close_fixture(&f);
}

static void test_login_notice_kept_until_written(void **state)
{
    (void)state;
    struct fixture f;
    open_fixture(&f, "blocked/state");
    block("blocked");
    struct notice n = {.subject = "throttled", .body = "your processes were slowed\n"};
    char msg[600] = "";
    assert_int_equal(persist_keep_login_notice(&f.io, UID, NOTICE_THROTTLED, &n, msg, sizeof(msg)),
                     NOTIFY_FAILED);
    assert_non_null(strstr(msg, "kept in memory"));
    assert_int_equal(f.persist.notice_count, 1);
    assert_true(f.persist.login.pending);
    /* Tried again at every sample, said once. */
    struct notice_rate rate = {0};
    persist_save_pending(&f.io, &rate);
    persist_save_pending(&f.io, &rate);
    assert_int_equal(f.persist.notice_count, 1);
    assert_int_equal(count_logged(f.events_path, "state_error", (uid_t)-1), 1);

    unblock("blocked");
    persist_save_pending(&f.io, &rate);
    assert_false(f.persist.login.pending);
    assert_int_equal(f.persist.notice_count, 0);
    assert_int_equal(count_logged(f.events_path, "state_written", (uid_t)-1), 1);
    json_t *taken = NULL;
    assert_int_equal(login_notices_take(f.policy.state_dir, UID, &taken, err, sizeof(err)), 0);
    assert_int_equal(json_array_size(taken), 1);
    json_t *first = json_array_get(taken, 0);
    assert_string_equal(json_string_value(json_object_get(first, "kind")), "throttled");
    assert_string_equal(json_string_value(json_object_get(first, "subject")), "throttled");
    assert_string_equal(json_string_value(json_object_get(first, "body")),
                        "your processes were slowed\n");
    json_decref(taken);
    /* Once: taken, they are read. */
    assert_int_equal(login_notices_take(f.policy.state_dir, UID, &taken, err, sizeof(err)), 0);
    assert_int_equal(json_array_size(taken), 0);
    json_decref(taken);

    /* Written at once when writing works. */
    assert_int_equal(persist_keep_login_notice(&f.io, UID, NOTICE_STOPPED, &n, msg, sizeof(msg)),
                     NOTIFY_SENT);
    assert_int_equal(f.persist.notice_count, 0);
    close_fixture(&f);
}

/* A newer notice of the same kind replaces the one still waiting. */
static void test_login_notice_newer_replaces(void **state)
{
    (void)state;
    struct fixture f;
    open_fixture(&f, "blocked/state");
    block("blocked");
    char msg[600];
    struct notice old = {.subject = "old", .body = "old\n"}, new = {.subject = "new",
                                                                     .body = "new\n"};
    persist_keep_login_notice(&f.io, UID, NOTICE_THROTTLED, &old, msg, sizeof(msg));
    persist_keep_login_notice(&f.io, UID, NOTICE_STOPPED, &old, msg, sizeof(msg));
    persist_keep_login_notice(&f.io, UID, NOTICE_THROTTLED, &new, msg, sizeof(msg));
    assert_int_equal(f.persist.notice_count, 2);
    unblock("blocked");
    struct notice_rate rate = {0};
    persist_save_pending(&f.io, &rate);
    json_t *taken = NULL;
    assert_int_equal(login_notices_take(f.policy.state_dir, UID, &taken, err, sizeof(err)), 0);
    assert_int_equal(json_array_size(taken), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(taken, 0), "kind")),
                        "stopped");
    assert_string_equal(json_string_value(json_object_get(json_array_get(taken, 1), "subject")),
                        "new");
    json_decref(taken);
    close_fixture(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_written_and_read_back),
        cmocka_unit_test(test_state_failing_said_once),
        cmocka_unit_test(test_notice_rate_failing_then_pending),
        cmocka_unit_test(test_login_notice_kept_until_written),
        cmocka_unit_test(test_login_notice_newer_replaces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
