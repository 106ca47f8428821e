#include "config.h"

#include <errno.h>
#include <jansson.h>

#include "engine.h"
#include "record/save_status.h"
#include "record/state.h"
#include "testutil.h"
#include "units.h"
#include "util.h"

#define SEC USEC_PER_SEC
#define T0 (1700000000ULL * SEC + 123456) /* not a whole second: usec must survive */

static int setup(void **state)
{
    (void)state;
    make_test_dir();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    remove_test_dir();
    return 0;
}

/* test_dir/name, in one of two rotating buffers (two may be needed at once). */
static const char *path_in(const char *name)
{
    static char paths[2][256];
    static int next;
    char *p = paths[next++ % 2];
    snprintf(p, sizeof(paths[0]), "%s/%s", test_dir, name);
    return p;
}

/* A file only we can write, as the loader requires. */
static void write_private(const char *name, const char *content)
{
    assert_int_equal(chmod(write_file(name, content), 0600), 0);
}

static char *read_whole(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static bool exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

static enum state_load_result load(struct engine_state *st, uint64_t now, char *moved_to,
                                   char *err)
{
    return state_load(test_dir, st, now, moved_to, 256, err, 512);
}

static void assert_same_persisted(const struct user_state *want, const struct user_state *got)
{
    assert_non_null(got);
    assert_int_equal(got->uid, want->uid);
    assert_int_equal(got->level, want->level);
    assert_int_equal(got->since, want->since);
    assert_int_equal(got->until, want->until);
    assert_int_equal(got->quiet_since, want->quiet_since);
    assert_int_equal(got->last_violation, want->last_violation);
    assert_int_equal(got->violations, want->violations);
    assert_int_equal(got->exempt_until, want->exempt_until);
    assert_int_equal(got->last_reason, want->last_reason);
    assert_true(got->last_cpu == want->last_cpu);
    assert_int_equal(got->last_memory, want->last_memory);
    assert_int_equal(got->last_window, want->last_window);
    /* The window being watched starts afresh after a restart. */
    assert_int_equal(got->cpu_over_since, 0);
    assert_true(got->cpu_over_sum == 0);
    assert_int_equal(got->mem_over_since, 0);
    assert_true(got->mem_over_sum == 0);
}

static void test_round_trip(void **state)
{
    (void)state;
    struct engine_state st = {0};
    struct user_state *a = engine_user(&st, 1001, true);
    a->level = 2;
    a->since = a->quiet_since = a->last_violation = T0 + 17;
    a->until = T0 + 1800 * SEC + 17;
    a->violations = 5;
    a->last_reason = VIOLATION_REASON_CPU; /* what the user is told at login */
    a->last_cpu = 3.25;
    a->last_memory = 5ULL << 30;
    a->last_window = 300 * SEC + 7;
    a->cpu_over_since = T0 + 100; /* being watched right now: not saved */
    a->cpu_over_sum = 3e6;
    a->mem_over_since = T0 + 200;
    a->mem_over_sum = 1e15;
    struct user_state *b = engine_user(&st, 4294967294u, true); /* the largest real uid */
    b->exempt_until = T0 + 86400 * SEC;
    struct user_state *c = engine_user(&st, 1003, true); /* decayed back to 0: history only */
    c->violations = UINT32_MAX;
    c->quiet_since = T0 - 7200 * SEC;
    c->last_violation = T0 - 9000 * SEC;
    c->since = T0 - 9000 * SEC;
    struct user_state *idle = engine_user(&st, 1004, true); /* only being watched */
    idle->cpu_over_since = T0;
    idle->cpu_over_sum = 1;
    /* Making a user may move the others (the table is kept sorted). */
    a = engine_user(&st, 1001, false);
    b = engine_user(&st, 4294967294u, false);
    c = engine_user(&st, 1003, false);

    char err[512] = "", moved[256] = "x";
    assert_int_equal(state_save(test_dir, &st, T0, err, sizeof(err)), 0);

    struct engine_state back = {0};
    assert_int_equal(load(&back, T0 + SEC, moved, err), STATE_LOADED);
    assert_string_equal(moved, "");
    assert_string_equal(err, "");
    assert_int_equal(back.user_count, 3);
    assert_same_persisted(a, engine_user(&back, 1001, false));
    assert_same_persisted(b, engine_user(&back, 4294967294u, false));
    assert_same_persisted(c, engine_user(&back, 1003, false));
    assert_null(engine_user(&back, 1004, false));
    engine_state_free(&st);
    engine_state_free(&back);
}

/* The point of it all: a user at level 1 before the restart goes to level
 * 2 on the next violation after it, not back to 1. */
static void test_penalty_survives_restart(void **state)
{
    (void)state;
    struct policy p;
    policy_init_defaults(&p);
    p.window = 10 * SEC;
    struct engine_state st = {0};
    struct snapshot snap = {0};
    struct decisions out = {0};
    uint64_t t = T0;
    for (int i = 0; i < 6 && out.count == 0; i++) {
        t += 2 * SEC;
        snapshot_clear(&snap);
        snap.now = t;
        snap.interval = 2 * SEC;
        snapshot_add_user(&snap, 1001)->cpu = 3;
        engine_step(&p, &st, &snap, &out);
    }
    assert_int_equal(out.count, 1);
    assert_int_equal(out.items[0].level_after, 1);

    char err[512], moved[256];
    assert_int_equal(state_save(test_dir, &st, t, err, sizeof(err)), 0);
    engine_state_free(&st); /* the daemon is killed... */
    assert_int_equal(load(&st, t + SEC, moved, err), STATE_LOADED); /* ...and restarted */

    decisions_clear(&out);
    for (int i = 0; i < 6 && out.count == 0; i++) {
        t += 2 * SEC;
        snapshot_clear(&snap);
        snap.now = t;
        snap.interval = 2 * SEC;
        snapshot_add_user(&snap, 1001)->cpu = 3;
        engine_step(&p, &st, &snap, &out);
    }
    assert_int_equal(out.count, 1);
    assert_int_equal(out.items[0].kind, DECISION_VIOLATION);
    assert_int_equal(out.items[0].level_before, 1);
    assert_int_equal(out.items[0].level_after, 2);
    assert_int_equal(engine_user(&st, 1001, false)->violations, 2);
    policy_free(&p);
    engine_state_free(&st);
    snapshot_free(&snap);
    decisions_free(&out);
}

static void test_save_replaces_atomically(void **state)
{
    (void)state;
    struct engine_state st = {0};
    engine_user(&st, 1001, true)->level = 1;
    char err[512], moved[256];
    write_private("state.json", "the old state");
    write_file("state.json.tmp", "left over by a crash");
    assert_int_equal(state_save(test_dir, &st, T0, err, sizeof(err)), 0);

    assert_false(exists(path_in("state.json.tmp")));
    struct stat sb;
    assert_int_equal(lstat(path_in("state.json"), &sb), 0);
    assert_true(S_ISREG(sb.st_mode));
    assert_int_equal(sb.st_mode & 07777, 0600);
    json_error_t jerr;
    json_t *root = json_load_file(path_in("state.json"), 0, &jerr);
    assert_non_null(root);
    assert_int_equal(json_integer_value(json_object_get(root, "version")), 1);
    assert_int_equal(json_integer_value(json_object_get(root, "saved")), T0);
    assert_int_equal(json_array_size(json_object_get(root, "users")), 1);
    json_decref(root);

    /* A symlink planted at the temporary name is replaced, not written
     * through, and the next save replaces the previous one. */
    write_private("victim", "precious");
    assert_int_equal(symlink(path_in("victim"), path_in("state.json.tmp")), 0);
    engine_user(&st, 1001, false)->level = 3;
    assert_int_equal(state_save(test_dir, &st, T0 + SEC, err, sizeof(err)), 0);
    char *victim = read_whole(path_in("victim"));
    assert_string_equal(victim, "precious");
    free(victim);
    assert_false(exists(path_in("state.json.tmp")));

    struct engine_state back = {0};
    assert_int_equal(load(&back, T0 + 2 * SEC, moved, err), STATE_LOADED);
    assert_int_equal(back.user_count, 1);
    assert_int_equal(engine_user(&back, 1001, false)->level, 3);
    engine_state_free(&st);
    engine_state_free(&back);
}

#define USER_FIELDS(uid, level, until)                                                       \
    "{\"uid\": " uid ", \"level\": " level ", \"since\": 1700000000000000, \"until\": " until \
    ", \"quiet_since\": 1700000000000000, \"last_violation\": 1700000000000000, "            \
    "\"violations\": 1, \"exempt_until\": 0}"
#define STATE_WITH(users) "{\"version\": 1, \"saved\": 1700000000000000, \"users\": [" users "]}"
#define GOOD_USER USER_FIELDS("1001", "1", "1700000900000000")
#define USER_WITH_LAST(last)                                                                 \
    "{\"uid\": 1001, \"level\": 1, \"since\": 1, \"until\": 2, \"quiet_since\": 1, "           \
    "\"last_violation\": 1, \"violations\": 1, \"exempt_until\": 0, \"last\": " last "}"

struct bad_case {
    const char *content;
    const char *why; /* a word the error must contain */
};

/* Load content as state.json at now; it must be moved aside whole. */
static void assert_moved_aside(const char *content, const char *why, uint64_t now,
                               const char *suffix)
{
    write_private("state.json", content);
    struct engine_state st = {0};
    char err[512], moved[256];
    assert_int_equal(load(&st, now, moved, err), STATE_MOVED_ASIDE);
    assert_int_equal(st.user_count, 0);
    assert_null(st.users);
    char name[64];
    snprintf(name, sizeof(name), "state.json.bad-%llu%s", (unsigned long long)(now / SEC), suffix);
    assert_string_equal(moved, path_in(name));
    assert_false(exists(path_in("state.json")));
    char *kept = read_whole(moved);
    assert_string_equal(kept, content);
    free(kept);
    /* The admin is told which file, what was wrong and where it went. */
    assert_non_null(strstr(err, path_in("state.json")));
    assert_non_null(strstr(err, why));
    assert_non_null(strstr(err, moved));
}

static void test_corrupt_files_are_moved_aside(void **state)
{
    (void)state;
    const struct bad_case cases[] = {
        {"this is not JSON\n", "not valid JSON"},
        {"", "not valid JSON"},
        {"\x89PNG\r\n\x1a\n\x01\x02", "not valid JSON"},
        {"[]", "not a JSON object"},
        {"{\"version\": 1, \"saved\": 1}", "\"users\" is missing"},
        {"{\"version\": 1, \"saved\": 1, \"users\": {}}", "\"users\" is not an array"},
        {"{\"version\": 2, \"saved\": 1, \"users\": []}", "version 2"},
        {"{\"version\": \"1\", \"saved\": 1, \"users\": []}", "\"version\" is not an integer"},
        {"{\"version\": 1, \"saved\": -1, \"users\": []}", "\"saved\" is -1"},
        {"{\"version\": 1, \"version\": 1, \"saved\": 1, \"users\": []}", "duplicate"},
        {STATE_WITH("42"), "users[0]: not an object"},
        {STATE_WITH(USER_FIELDS("1001", "\"2\"", "0")), "\"level\" is not an integer"},
        {STATE_WITH(USER_FIELDS("1001", "2.0", "0")), "\"level\" is not an integer"},
        {STATE_WITH(USER_FIELDS("1001", "-1", "0")), "\"level\" is -1"},
        {STATE_WITH(USER_FIELDS("1001", "65", "0")), "\"level\" is 65"},
        {STATE_WITH(USER_FIELDS("-1", "1", "0")), "\"uid\" is -1"},
        {STATE_WITH(USER_FIELDS("4294967295", "1", "0")), "\"uid\" is 4294967295"},
        {STATE_WITH(USER_FIELDS("4294967296", "1", "0")), "\"uid\" is 4294967296"},
        {STATE_WITH(USER_FIELDS("99999999999999999999999", "1", "0")), "not valid JSON"},
        {STATE_WITH(USER_FIELDS("1001", "1", "-5")), "\"until\" is -5"},
        {STATE_WITH(USER_FIELDS("1001", "1", "1.5e15")), "\"until\" is not an integer"},
        {STATE_WITH(USER_FIELDS("1001", "1", "null")), "\"until\" is not an integer"},
        {STATE_WITH("{\"uid\": 1001, \"level\": 1, \"violations\": 1}"), "\"since\" is missing"},
        {STATE_WITH("{\"uid\": 1001, \"level\": 1, \"violations\": 4294967296}"),
         "\"violations\" is 4294967296"},
        /* One bad entry after a good one: the whole file goes. */
        {STATE_WITH(GOOD_USER ", " USER_FIELDS("1002", "-1", "0")), "users[1]: \"level\""},
        {STATE_WITH(GOOD_USER ", " GOOD_USER), "uid 1001 is listed twice"},
        {STATE_WITH(USER_WITH_LAST("{}")), "\"last\" needs a \"reason\""},
        {STATE_WITH(USER_WITH_LAST("{\"reason\": \"disk\", \"cpu\": 1, \"memory\": 0, "
                                   "\"window\": 0}")),
         "\"last\" needs a \"reason\""},
        {STATE_WITH(USER_WITH_LAST("{\"reason\": \"cpu\", \"cpu\": -1, \"memory\": 0, "
                                   "\"window\": 0}")),
         "\"cpu\" between 0"},
        {STATE_WITH(USER_WITH_LAST("{\"reason\": \"cpu\", \"cpu\": 1, \"window\": 0}")),
         "\"memory\" is missing"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        print_message("case %zu: %s\n", i, cases[i].why);
        assert_moved_aside(cases[i].content, cases[i].why, T0 + i * SEC, "");
    }

    /* A file cut short, as a full disk or a careless copy leaves it. */
    struct engine_state st = {0};
    engine_user(&st, 1001, true)->level = 1;
    engine_user(&st, 1002, true)->violations = 3;
    char err[512];
    assert_int_equal(state_save(test_dir, &st, T0, err, sizeof(err)), 0);
    char *whole = read_whole(path_in("state.json"));
    whole[strlen(whole) / 2] = '\0';
    assert_moved_aside(whole, "not valid JSON", T0 + 1000 * SEC, "");
    free(whole);
    engine_state_free(&st);
}

/* Bad files found in the same second are all kept. */
static void test_bad_files_are_never_overwritten(void **state)
{
    (void)state;
    assert_moved_aside("first", "not valid JSON", T0, "");
    assert_moved_aside("second", "not valid JSON", T0, ".1");
    assert_moved_aside("third", "not valid JSON", T0 + 500000, ".2");
    char *first = read_whole(path_in("state.json.bad-1700000000"));
    assert_string_equal(first, "first");
    free(first);
}

static void test_absent(void **state)
{
    (void)state;
    struct engine_state st = {0};
    char err[512], moved[256];
    assert_int_equal(load(&st, T0, moved, err), STATE_ABSENT);
    assert_string_equal(err, "");
    assert_int_equal(st.user_count, 0);
    /* A state directory not made yet: a first start too. */
    assert_int_equal(state_load(path_in("not-made-yet"), &st, T0, moved, sizeof(moved), err,
                                sizeof(err)),
                     STATE_ABSENT);
}

static void test_symlink_is_refused(void **state)
{
    (void)state;
    const char *valid = STATE_WITH(GOOD_USER);
    write_private("elsewhere.json", valid);
    assert_int_equal(symlink(path_in("elsewhere.json"), path_in("state.json")), 0);
    struct engine_state st = {0};
    char err[512], moved[256];
    assert_int_equal(load(&st, T0, moved, err), STATE_ERROR);
    assert_int_equal(st.user_count, 0);
    assert_string_equal(moved, "");
    assert_non_null(strstr(err, path_in("state.json")));
    assert_non_null(strstr(err, "symbolic link"));
    /* Neither the link nor its target moved or changed. */
    struct stat sb;
    assert_int_equal(lstat(path_in("state.json"), &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    char *target = read_whole(path_in("elsewhere.json"));
    assert_string_equal(target, valid);
    free(target);
    assert_false(exists(path_in("state.json.bad-1700000000")));
}

static void test_not_a_regular_file_is_refused(void **state)
{
    (void)state;
    struct engine_state st = {0};
    char err[512], moved[256];
    /* A FIFO nobody writes to must not hang the daemon's start (if it
     * does, SIGALRM ends the test as a failure rather than a hang). */
    assert_int_equal(mkfifo(path_in("state.json"), 0600), 0);
    alarm(10);
    assert_int_equal(load(&st, T0, moved, err), STATE_ERROR);
    alarm(0);
    assert_non_null(strstr(err, "not a regular file"));
    assert_int_equal(unlink(path_in("state.json")), 0);

    assert_int_equal(mkdir(path_in("state.json"), 0700), 0);
    assert_int_equal(load(&st, T0, moved, err), STATE_ERROR);
    assert_non_null(strstr(err, "not a regular file"));
    assert_int_equal(st.user_count, 0);
    /* Saving cannot put a file where a directory is, and says so. */
    engine_user(&st, 1001, true)->level = 1;
    assert_int_equal(state_save(test_dir, &st, T0, err, sizeof(err)), -1);
    assert_non_null(strstr(err, path_in("state.json")));
    assert_false(exists(path_in("state.json.tmp")));
    engine_state_free(&st);
}

/* A state file others can write would let a user exempt themselves. */
static void test_writable_by_others_is_refused(void **state)
{
    (void)state;
    const char *path = write_file("state.json", STATE_WITH(GOOD_USER));
    assert_int_equal(chmod(path, 0622), 0);
    struct engine_state st = {0};
    char err[512], moved[256];
    assert_int_equal(load(&st, T0, moved, err), STATE_ERROR);
    assert_int_equal(st.user_count, 0);
    assert_non_null(strstr(err, "writable by others"));
    assert_true(exists(path_in("state.json")));
}

static void test_save_to_missing_dir(void **state)
{
    (void)state;
    struct engine_state st = {0};
    engine_user(&st, 1001, true)->level = 1;
    char err[512];
    const char *dir = path_in("no/such/dir");
    assert_int_equal(state_save(dir, &st, T0, err, sizeof(err)), -1);
    assert_non_null(strstr(err, dir));
    assert_non_null(strstr(err, "No such file or directory"));
    engine_state_free(&st);
}

/* A failing write is said once, tried again until it works, and the one
 * that works is said with how many failed since when. */
static void test_save_status_says_each_change_once(void **state)
{
    (void)state;
    struct save_status s = {0};
    assert_int_equal(save_status_note(&s, true, 10), SAVE_NOTHING_NEW);
    assert_false(s.pending);
    assert_int_equal(save_status_note(&s, false, 20), SAVE_STARTED_FAILING);
    assert_true(s.pending);
    assert_int_equal(save_status_note(&s, false, 30), SAVE_NOTHING_NEW);
    assert_int_equal(save_status_note(&s, false, 40), SAVE_NOTHING_NEW);
    assert_true(s.pending);
    assert_int_equal(save_status_note(&s, true, 50), SAVE_WRITTEN_AGAIN);
    assert_false(s.pending);
    assert_int_equal(s.failing_since, 20);
    assert_int_equal(s.failures, 3);
    assert_int_equal(save_status_note(&s, true, 60), SAVE_NOTHING_NEW);
    /* A new run of failures is said again, with its own start. */
    assert_int_equal(save_status_note(&s, false, 70), SAVE_STARTED_FAILING);
    assert_int_equal(save_status_note(&s, true, 80), SAVE_WRITTEN_AGAIN);
    assert_int_equal(s.failing_since, 70);
    assert_int_equal(s.failures, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_penalty_survives_restart, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_replaces_atomically, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_files_are_moved_aside, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_files_are_never_overwritten, setup, teardown),
        cmocka_unit_test_setup_teardown(test_absent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlink_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_a_regular_file_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_writable_by_others_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_to_missing_dir, setup, teardown),
        cmocka_unit_test(test_save_status_says_each_change_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
