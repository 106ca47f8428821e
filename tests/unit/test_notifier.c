/* The notices as the daemon sends them (notify.c), through the notifier
 * view on a fake environment: a temporary state_dir and event log, a
 * clock the test moves, the shipped templates, and the login channel
 * (what pam_loginguard shows at the next login).  The terminal, desktop
 * and mail channels need a user's terminal, session bus or sendmail:
 * test_notify_channels.py runs them for real. */
#include "config.h"

#include "fake_env.h"
#include "notify/notify.h"
#include "record/login_notices.h"
#include "testutil.h"
#include "util.h"

#define UID 2000000007u

struct fixture {
    struct environment env;
    struct policy policy;
    struct event_log events;
    struct notice_jobs jobs;
    struct notice_rate rate;
    struct directory directory;
    struct metrics metrics;
    struct persist persist;
    struct history history;
    struct notifier nt;
    struct snapshot snap;
    struct decision decision;
    char events_path[256];
};

static struct fixture f;

static int setup(void **state)
{
    (void)state;
    memset(&f, 0, sizeof(f));
    make_test_dir();
    fake_now = 1700000000ULL * SEC;
    environment_host(&f.env);
    f.env.realtime = fake_clock;
    f.env.boottime = fake_clock;
    policy_init_defaults(&f.policy);
    free(f.policy.state_dir);
    f.policy.state_dir = strdup(test_dir);
    for (size_t i = 0; i < f.policy.channels.count; i++)
        free(f.policy.channels.names[i]);
    f.policy.channels.names[0] = strdup("login");
    f.policy.channels.count = 1;
    char *dir = xasprintf("%s/rules/notices", TOP_SRCDIR);
    char *dirs[] = {dir};
    struct errors errs = {0};
    assert_int_equal(notice_templates_load(&f.policy.notices, dirs, 1, &errs), 0);
    free(dir);
    snprintf(f.events_path, sizeof(f.events_path), "%s/events.log", test_dir);
    assert_int_equal(event_log_open(&f.events, f.events_path, false), 0);
    f.directory.helper.sock = -1; /* no helper: the user has no name */
    f.nt = (struct notifier){
        .env = &f.env,
        .policy = &f.policy,
        .events = &f.events,
        .jobs = &f.jobs,
        .rate = &f.rate,
        .directory = &f.directory,
        .metrics = &f.metrics,
        .enforcing = true,
        .io = {.env = &f.env, .policy = &f.policy, .events = &f.events, .persist = &f.persist},
        .history = &f.history,
    };
    /* A violation on CPU by a program with a command line. */
    struct proc_sample *ps = snapshot_add_proc(&f.snap);
    ps->pid = 4242;
    ps->uid = UID;
    strcpy(ps->comm, "gmx_mpi");
    ps->exe = strdup("/opt/gromacs/bin/gmx_mpi");
    static const char argv[] = "gmx_mpi\0mdrun\0-deffnm\0run 1";
    ps->argv_len = sizeof(argv) - 1;
    ps->argv = xmalloc(ps->argv_len + 1);
    memcpy(ps->argv, argv, ps->argv_len + 1);
    ps->argv_total = ps->argv_len;
    ps->cpu = 3.9;
    f.snap.now = fake_now;
    f.decision = (struct decision){.kind = DECISION_VIOLATION, .uid = UID, .level_before = 0,
                                   .level_after = 2, .until = fake_now + 3600 * SEC,
                                   .reason = "cpu", .cpu = 3.9, .memory = 1ULL << 30,
                                   .window = 300 * SEC, .procs = {0}, .proc_count = 1};
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    snapshot_free(&f.snap);
    notice_rate_free(&f.rate);
    persist_free(&f.persist);
    event_log_close(&f.events);
    policy_free(&f.policy);
    directory_stop(&f.directory);
    remove_test_dir();
    return 0;
}

static const char *field(const json_t *e, const char *name)
{
    const char *v = json_string_value(json_object_get(e, name));
    return v ? v : "";
}

static json_t *take_login_notices(void)
{
    json_t *list = NULL;
    char err[512];
    assert_int_equal(login_notices_take(f.policy.state_dir, UID, &list, err, sizeof(err)), 0);
    return list;
}

/* A violation is kept for the next login with the program, its command
 * line and the numbers, and said as a notice event; the same again within
 * the rate limit is held back, and said so; after it, it goes out. */
static void test_a_violation_reaches_the_next_login_once_per_rate_limit(void **state)
{
    (void)state;
    notify_decision(&f.nt, &f.decision, &f.snap, NULL);
    json_t *list = take_login_notices();
    assert_int_equal(json_array_size(list), 1);
    const char *body = json_string_value(json_object_get(json_array_get(list, 0), "body"));
    assert_non_null(body);
    assert_non_null(strstr(body, "gmx_mpi"));
    assert_non_null(strstr(body, "gmx_mpi mdrun -deffnm 'run 1'"));
    assert_non_null(strstr(body, "3.9"));
    json_decref(list);
    json_t *events = logged_events(f.events_path, "notice", UID);
    assert_int_equal(json_array_size(events), 1);
    assert_string_equal(field(json_array_get(events, 0), "channel"), "login");
    assert_string_equal(field(json_array_get(events, 0), "outcome"), "sent");
    json_decref(events);

    fake_now += f.policy.rate_limit / 2;
    notify_decision(&f.nt, &f.decision, &f.snap, NULL);
    list = take_login_notices();
    assert_int_equal(json_array_size(list), 0);
    json_decref(list);
    events = logged_events(f.events_path, "notice", UID);
    assert_int_equal(json_array_size(events), 2);
    assert_string_equal(field(json_array_get(events, 1), "outcome"), "rate_limited");
    json_decref(events);

    fake_now += f.policy.rate_limit;
    notify_decision(&f.nt, &f.decision, &f.snap, NULL);
    list = take_login_notices();
    assert_int_equal(json_array_size(list), 1);
    json_decref(list);
}

/* Observe mode sends nothing, unless asked to; then the notice says
 * that nothing was done. */
static void test_observe_mode_says_nothing_unless_asked(void **state)
{
    (void)state;
    f.nt.enforcing = false;
    notify_decision(&f.nt, &f.decision, &f.snap, NULL);
    json_t *list = take_login_notices();
    assert_int_equal(json_array_size(list), 0);
    json_decref(list);
    json_t *events = logged_events(f.events_path, "notice", UID);
    assert_int_equal(json_array_size(events), 0);
    json_decref(events);

    f.policy.notify_in_observe = true;
    notify_decision(&f.nt, &f.decision, &f.snap, NULL);
    list = take_login_notices();
    assert_int_equal(json_array_size(list), 1);
    const char *subject =
        json_string_value(json_object_get(json_array_get(list, 0), "subject"));
    assert_non_null(subject);
    assert_non_null(strstr(subject, "[observe mode]"));
    json_decref(list);
}

/* A notice kept while state_dir cannot be written is not lost: it is
 * written at a later sample (persist_save_pending), and its event says
 * it failed now. */
static void test_a_notice_kept_while_the_disk_fails_is_written_later(void **state)
{
    (void)state;
    block("blocked");
    char *good = f.policy.state_dir;
    f.policy.state_dir = xasprintf("%s/blocked/state", test_dir);
    notify_decision(&f.nt, &f.decision, &f.snap, NULL);
    json_t *events = logged_events(f.events_path, "notice", UID);
    assert_int_equal(json_array_size(events), 1);
    assert_string_equal(field(json_array_get(events, 0), "outcome"), "failed");
    json_decref(events);
    free(f.policy.state_dir);
    f.policy.state_dir = good;
    persist_save_pending(&f.nt.io, &f.rate);
    json_t *list = take_login_notices();
    assert_int_equal(json_array_size(list), 1);
    json_decref(list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_a_violation_reaches_the_next_login_once_per_rate_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_observe_mode_says_nothing_unless_asked, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_notice_kept_while_the_disk_fails_is_written_later,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
