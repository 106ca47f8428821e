/* What decides, fills in and limits the notices users get: which kind a
 * decision calls for, the values of the placeholders, the rate limit and
 * the notices kept for the next login. */
#include "testutil.h"

#include <time.h>

#include "notice_build.h"
#include "policy.h"
#include "record/login_notices.h"
#include "record/notice_rate.h"
#include "units.h"
#include "util.h"

static const char *value(const struct notice_values *v, const char *name)
{
    for (size_t i = 0; i < v->count; i++)
        if (strcmp(v->fields[i].name, name) == 0)
            return v->fields[i].value;
    fail_msg("no field %s", name);
    return NULL;
}

static void test_kind_follows_the_level(void **state)
{
    (void)state;
    struct policy p;
    policy_init_defaults(&p);   /* warned (no limits), throttled, restricted (stop) */
    enum notice_kind k;
    struct decision x = {.kind = DECISION_VIOLATION, .level_after = 1};
    assert_true(notice_kind_for(&p, &x, &k));
    assert_int_equal(k, NOTICE_WARNED);
    x.level_after = 2;
    assert_true(notice_kind_for(&p, &x, &k));
    assert_int_equal(k, NOTICE_THROTTLED);
    x.level_after = 3;
    assert_true(notice_kind_for(&p, &x, &k));
    assert_int_equal(k, NOTICE_STOPPED);
    x.kind = DECISION_FORBIDDEN;
    assert_true(notice_kind_for(&p, &x, &k));
    assert_int_equal(k, NOTICE_FORBIDDEN);
    x.kind = DECISION_COMPUTE;
    assert_true(notice_kind_for(&p, &x, &k));
    assert_int_equal(k, NOTICE_STOPPED);
    x.kind = DECISION_EXPIRED;
    assert_true(notice_kind_for(&p, &x, &k));
    assert_int_equal(k, NOTICE_RELEASED);
    x.kind = DECISION_DECAYED;   /* a quiet hour: nothing to tell */
    assert_false(notice_kind_for(&p, &x, &k));
    policy_free(&p);
}

static void test_throttle_values_have_the_numbers(void **state)
{
    (void)state;
    struct policy p;
    policy_init_defaults(&p);
    p.batch_partition = xstrdup("batch");
    p.interactive_partition = xstrdup("interactive");
    static char argv[] = "/opt/sim/bin/lmp\0-in\0in file.lmp";
    struct proc_sample ps = {.pid = 4242, .comm = "lmp", .argv = argv,
                             .argv_len = sizeof(argv) - 1, .cpu = 2.4, .rss = 3ULL << 30};
    /* 14:05 local time today, whatever the zone. */
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    tm.tm_hour = 14;
    tm.tm_min = 5;
    tm.tm_sec = 0;
    uint64_t until = (uint64_t)mktime(&tm) * USEC_PER_SEC;
    struct decision x = {.kind = DECISION_VIOLATION, .level_before = 1, .level_after = 2,
                         .until = until, .reason = "cpu", .cpu = 2.4, .memory = 3ULL << 30,
                         .window = 5 * 60 * USEC_PER_SEC, .proc_count = 1};
    struct notice_facts f = {.policy = &p, .decision = &x, .kind = NOTICE_THROTTLED, .proc = &ps,
                             .user = "alice", .host = "login1",
                             .runtime_usec = 40 * 60 * USEC_PER_SEC};
    struct notice_values v;
    notice_values_build(&v, &f);
    assert_string_equal(value(&v, "user"), "alice");
    assert_string_equal(value(&v, "host"), "login1");
    assert_string_equal(value(&v, "program"), "lmp");
    assert_string_equal(value(&v, "command"), "/opt/sim/bin/lmp -in 'in file.lmp'");
    assert_string_equal(value(&v, "pid"), "4242");
    assert_string_equal(value(&v, "cores"), "2.4");
    assert_string_equal(value(&v, "memory"), "3.0G");
    assert_string_equal(value(&v, "duration"), "5m");
    assert_string_equal(value(&v, "level"), "throttled");
    assert_string_equal(value(&v, "until"), "14:05");
    assert_string_equal(value(&v, "action"), "throttled");
    assert_string_equal(value(&v, "limit_cpu"), "1 core");
    assert_string_equal(value(&v, "limit_memory"), "4.0G");
    const char *sbatch = value(&v, "sbatch");
    assert_non_null(strstr(sbatch, "sbatch -p batch -c 3 "));
    assert_non_null(strstr(sbatch, "--wrap "));
    assert_non_null(strstr(value(&v, "salloc"), "-p interactive"));
    assert_string_equal(value(&v, "docs_url"), "");
    notice_values_free(&v);
    policy_free(&p);
}

/* The busiest process of a throttled user was a child seen before its
 * command line was read (in the VM, the hog's own short-lived helper): a
 * warning or throttle notice is about the busiest with a command line, so
 * its sbatch line runs the job; a stop notice names the process stopped. */
/* An empty last argument is an argument: kept as the sampler keeps a
 * command line (no final NUL), it is in the command and the line. */
static void test_an_empty_last_argument_is_kept(void **state)
{
    (void)state;
    struct policy p;
    policy_init_defaults(&p);
    static char argv[] = "prog\0x\0";
    struct proc_sample ps = {.pid = 7, .comm = "prog", .argv = argv,
                             .argv_len = sizeof(argv) - 1, .argv_total = sizeof(argv) - 1,
                             .cpu = 1};
    struct decision x = {.kind = DECISION_VIOLATION, .level_after = 1, .cpu = 1,
                         .proc_count = 1};
    struct notice_facts f = {.policy = &p, .decision = &x, .kind = NOTICE_THROTTLED, .proc = &ps,
                             .user = "alice", .host = "login1"};
    struct notice_values v;
    notice_values_build(&v, &f);
    assert_string_equal(value(&v, "command"), "prog x ''");
    assert_non_null(strstr(value(&v, "sbatch"), " --wrap \"prog x ''\""));
    notice_values_free(&v);
    policy_free(&p);
}

static void test_notice_is_about_a_process_with_a_command_line(void **state)
{
    (void)state;
    static char argv[] = "python3\0train.py";
    struct proc_sample procs[] = {
        {.pid = 100, .comm = "lgctl", .cpu = 1.2},
        {.pid = 101, .comm = "python3", .argv = argv, .argv_len = sizeof(argv) - 1, .cpu = 0.9},
    };
    struct snapshot snap = {.procs = procs, .proc_count = 2};
    struct decision x = {.kind = DECISION_VIOLATION, .procs = {0, 1}, .proc_count = 2};
    assert_int_equal(notice_process_for(&x, &snap, NOTICE_WARNED)->pid, 101);
    assert_int_equal(notice_process_for(&x, &snap, NOTICE_THROTTLED)->pid, 101);
    assert_int_equal(notice_process_for(&x, &snap, NOTICE_STOPPED)->pid, 100);
    /* None has a command line yet: still the busiest, without an sbatch line. */
    procs[1].argv_len = 0;
    assert_int_equal(notice_process_for(&x, &snap, NOTICE_THROTTLED)->pid, 100);
    x.proc_count = 0;
    assert_null(notice_process_for(&x, &snap, NOTICE_THROTTLED));
}

static void test_release_has_no_program_lines(void **state)
{
    (void)state;
    struct policy p;
    policy_init_defaults(&p);
    struct decision x = {.kind = DECISION_EXPIRED, .level_before = 2, .level_after = 2};
    struct notice_facts f = {.policy = &p, .decision = &x, .kind = NOTICE_RELEASED,
                             .user = "alice", .host = "login1"};
    struct notice_values v;
    notice_values_build(&v, &f);
    assert_string_equal(value(&v, "action"), "they came with level throttled");
    assert_string_equal(value(&v, "until"), "");
    assert_string_equal(value(&v, "limit_cpu"), "");
    assert_string_equal(value(&v, "program"), "");
    assert_string_equal(value(&v, "sbatch"), "");
    notice_values_free(&v);
    policy_free(&p);
}

static void test_rate_limit_is_per_user_and_kind(void **state)
{
    (void)state;
    struct notice_rate r = {0};
    uint64_t hour = 3600 * USEC_PER_SEC, t = 1000 * hour;
    assert_true(notice_rate_due(&r, 1001, NOTICE_THROTTLED, t, hour));
    /* Due until one reached the user. */
    assert_true(notice_rate_due(&r, 1001, NOTICE_THROTTLED, t + 1, hour));
    notice_rate_note(&r, 1001, NOTICE_THROTTLED, t);
    for (int i = 1; i < 10; i++)
        assert_false(notice_rate_due(&r, 1001, NOTICE_THROTTLED, t + i * 60 * USEC_PER_SEC, hour));
    assert_true(notice_rate_due(&r, 1001, NOTICE_STOPPED, t, hour));
    assert_true(notice_rate_due(&r, 1002, NOTICE_THROTTLED, t, hour));
    assert_true(notice_rate_due(&r, 1001, NOTICE_THROTTLED, t + hour, hour));
    notice_rate_free(&r);
}

static void test_forgiven_user_is_told_again(void **state)
{
    (void)state;
    struct notice_rate r = {0};
    uint64_t t = 1700000000ull * USEC_PER_SEC, hour = 3600 * USEC_PER_SEC;
    notice_rate_note(&r, 1001, NOTICE_THROTTLED, t);
    notice_rate_note(&r, 1001, NOTICE_STOPPED, t);
    notice_rate_note(&r, 1002, NOTICE_THROTTLED, t);
    notice_rate_forget(&r, 1001);
    assert_true(notice_rate_due(&r, 1001, NOTICE_THROTTLED, t + 1, hour));
    assert_true(notice_rate_due(&r, 1001, NOTICE_STOPPED, t + 1, hour));
    assert_false(notice_rate_due(&r, 1002, NOTICE_THROTTLED, t + 1, hour));
    notice_rate_free(&r);
}

static void test_rate_limit_survives_a_restart(void **state)
{
    (void)state;
    const char *dir = make_test_dir();
    uint64_t hour = 3600 * USEC_PER_SEC, t = 1000 * hour;
    struct notice_rate r = {0};
    char err[512];
    notice_rate_note(&r, 1001, NOTICE_FORBIDDEN, t);
    notice_rate_note(&r, 1002, NOTICE_WARNED, t - 2 * hour);
    notice_rate_prune(&r, t, hour);   /* 1002's is past the limit: not kept */
    assert_int_equal(notice_rate_save(&r, dir, err, sizeof(err)), 0);
    notice_rate_free(&r);
    assert_int_equal(notice_rate_load(&r, dir, err, sizeof(err)), 0);
    assert_int_equal(r.count, 1);
    assert_false(notice_rate_due(&r, 1001, NOTICE_FORBIDDEN, t + 60 * USEC_PER_SEC, hour));
    notice_rate_free(&r);
    /* A uid that fits no uid_t is dropped, not cut down to another's. */
    write_file("notified.json",
               "{\"sent\": [{\"uid\": 4294968297, \"kind\": \"warned\", \"time\": 5}]}");
    assert_int_equal(notice_rate_load(&r, dir, err, sizeof(err)), 0);
    assert_int_equal(r.count, 0);
    /* Garbage is said, and the limit starts afresh. */
    write_file("notified.json", "{\"sent\": 7}");
    assert_int_equal(notice_rate_load(&r, dir, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "notified.json"));
    assert_int_equal(r.count, 0);
    remove_test_dir();
}

static void test_login_notices_are_taken_once(void **state)
{
    (void)state;
    const char *dir = make_test_dir();
    char err[512];
    json_t *unread;
    assert_int_equal(login_notices_take(dir, 1001, &unread, err, sizeof(err)), 0);
    assert_int_equal(json_array_size(unread), 0);
    json_decref(unread);
    /* A login with nothing to show writes nothing (logins can come fast). */
    char path[256];
    struct stat sb;
    snprintf(path, sizeof(path), "%s/login-notices/1001.json", dir);
    assert_int_equal(stat(path, &sb), -1);
    assert_int_equal(login_notice_add(dir, 1001, 5, "throttled", "Throttled", "body\n", err,
                                      sizeof(err)), 0);
    assert_int_equal(login_notice_add(dir, 1001, 6, "released", "Free again", "b\n", err,
                                      sizeof(err)), 0);
    assert_int_equal(login_notices_take(dir, 1001, &unread, err, sizeof(err)), 0);
    assert_int_equal(json_array_size(unread), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(unread, 0), "kind")),
                        "throttled");
    json_decref(unread);
    /* Shown once: the next login has nothing new, and writes nothing. */
    assert_int_equal(stat(path, &sb), 0);
    struct timespec written = sb.st_mtim;
    ino_t inode = sb.st_ino;
    assert_int_equal(login_notices_take(dir, 1001, &unread, err, sizeof(err)), 0);
    assert_int_equal(json_array_size(unread), 0);
    json_decref(unread);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_ino, inode); /* written files are renamed into place */
    assert_int_equal(sb.st_mtim.tv_nsec, written.tv_nsec);
    remove_test_dir();
}

static void test_login_notices_keep_the_latest_ten(void **state)
{
    (void)state;
    const char *dir = make_test_dir();
    char err[512];
    for (int i = 0; i < 25; i++)
        assert_int_equal(login_notice_add(dir, 1001, (uint64_t)i, "warned", "s", "b\n", err,
                                          sizeof(err)), 0);
    json_t *unread;
    assert_int_equal(login_notices_take(dir, 1001, &unread, err, sizeof(err)), 0);
    assert_int_equal(json_array_size(unread), LOGIN_NOTICES_KEPT);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(unread, 0), "time")),
                     25 - LOGIN_NOTICES_KEPT);
    json_decref(unread);
    remove_test_dir();
}

static void test_login_notices_never_follow_a_link(void **state)
{
    (void)state;
    const char *dir = make_test_dir();
    char path[256], target[256], err[512];
    snprintf(path, sizeof(path), "%s/login-notices", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/login-notices/1001.json", dir);
    snprintf(target, sizeof(target), "%s/elsewhere", dir);
    write_file("elsewhere", "untouched");
    assert_int_equal(symlink(target, path), 0);
    assert_int_equal(login_notice_add(dir, 1001, 1, "warned", "s", "b\n", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "symbolic link"));
    FILE *f = fopen(target, "r");
    char buf[32] = "";
    assert_non_null(fgets(buf, sizeof(buf), f));
    fclose(f);
    assert_string_equal(buf, "untouched");
    remove_test_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_follows_the_level),
        cmocka_unit_test(test_throttle_values_have_the_numbers),
        cmocka_unit_test(test_an_empty_last_argument_is_kept),
        cmocka_unit_test(test_notice_is_about_a_process_with_a_command_line),
        cmocka_unit_test(test_release_has_no_program_lines),
        cmocka_unit_test(test_rate_limit_is_per_user_and_kind),
        cmocka_unit_test(test_forgiven_user_is_told_again),
        cmocka_unit_test(test_rate_limit_survives_a_restart),
        cmocka_unit_test(test_login_notices_are_taken_once),
        cmocka_unit_test(test_login_notices_keep_the_latest_ten),
        cmocka_unit_test(test_login_notices_never_follow_a_link),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
