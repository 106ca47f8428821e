#include "config.h"

#include "observe/cgroup_counters.h"
#include "observe/subuid.h"
#include "programs.h"
#include "testutil.h"

static struct rule_set load_rules(const char *text)
{
    make_test_dir();
    struct rule_set set = {0};
    struct errors errs = {0};
    rules_load_file(&set, write_file("t.rules", text), &errs);
    assert_int_equal(errs.count, 0);
    errors_free(&errs);
    remove_test_dir();
    return set;
}

static const char RULES[] =
    "{\"name\": \"ssh\", \"class\": \"exempt\", \"exe\": \"/usr/sbin/sshd\"}\n"
    "{\"name\": \"miner-name\", \"class\": \"forbidden\", \"comm\": \"xmrig\"}\n"
    "{\"name\": \"pool\", \"class\": \"forbidden\", \"argv\": \"stratum\\\\+tcp://\"}\n"
    "{\"name\": \"py-train\", \"class\": \"compute\", \"comm\": \"python*\", \"argv\": \"train\\\\.py\"}\n";

static struct program_facts facts(const char *exe, bool trusted, const char *argv, size_t len)
{
    static char digest[65];
    if (argv)
        sha256_hex(argv, len, digest);
    return (struct program_facts){.exe = exe, .exe_trusted = trusted, .argv = argv,
                                  .argv_len = len, .argv_total = len,
                                  .argv_sha256 = argv ? digest : NULL};
}

static const char *class_of(const struct rule_set *set, const struct program *p, const char *comm)
{
    const struct rule *r = programs_classify(set, p, comm);
    return r ? r->name : "none";
}

/* Processes that run the same share one entry; a rename is judged by the
 * comm parts alone, the argv parts being already known. */
static void test_shared_entry_and_rename(void **state)
{
    (void)state;
    struct rule_set set = load_rules(RULES);
    struct program_table t = {0};
    static const char argv[] = "python3\0train.py\0--epochs\0""10";
    struct program_facts f = facts("/usr/bin/python3.11", true, argv, sizeof(argv) - 1);
    const struct program *a = programs_get(&t, &set, &f);
    const struct program *b = programs_get(&t, &set, &f);
    assert_ptr_equal(a, b);
    assert_int_equal(t.count, 1);
    assert_string_equal(class_of(&set, a, "python3"), "py-train");
    /* Renamed: the argv part still matches, the comm part no longer. */
    assert_string_equal(class_of(&set, a, "sleepy"), "none");
    /* Renamed to a forbidden name: judged by that at once. */
    assert_string_equal(class_of(&set, a, "xmrig"), "miner-name");
    assert_true(a->argv_known);
    assert_int_equal(a->argv_total, sizeof(argv) - 1);
    assert_int_equal(strlen(a->argv_sha256), 64);
    programs_put(&t, a);
    programs_put(&t, b);
    assert_int_equal(t.count, 0);
    programs_free(&t);
    rules_free(&set);
}

/* A path that does not mean, for the daemon, the file the process runs
 * (a private mount namespace) matches no exe pattern. */
static void test_untrusted_path_matches_no_exe_rule(void **state)
{
    (void)state;
    struct rule_set set = load_rules(RULES);
    struct program_table t = {0};
    struct program_facts trusted = facts("/usr/sbin/sshd", true, NULL, 0);
    struct program_facts untrusted = facts("/usr/sbin/sshd", false, NULL, 0);
    const struct program *a = programs_get(&t, &set, &trusted);
    const struct program *b = programs_get(&t, &set, &untrusted);
    assert_ptr_not_equal(a, b);
    assert_string_equal(class_of(&set, a, "sshd"), "ssh");
    assert_string_equal(class_of(&set, b, "sshd"), "none");
    /* After a package upgrade the running binary reads "(deleted)". */
    struct program_facts upgraded = facts("/usr/sbin/sshd (deleted)", true, NULL, 0);
    const struct program *c = programs_get(&t, &set, &upgraded);
    assert_string_equal(class_of(&set, c, "sshd"), "ssh");
    programs_put(&t, a);
    programs_put(&t, b);
    programs_put(&t, c);
    programs_free(&t);
    rules_free(&set);
}

/* In another mount namespace, a rule's exe matches by the file it names
 * (as it was at load), whatever path the process shows. */
static void test_foreign_namespace_matches_by_file(void **state)
{
    (void)state;
    make_test_dir();
    char exe[256], rule[512];
    snprintf(exe, sizeof(exe), "%s", write_file("bin/agent", "#!/bin/sh\n"));
    snprintf(rule, sizeof(rule),
             "{\"name\": \"agent\", \"class\": \"exempt\", \"exe\": \"%s\"}\n", exe);
    struct rule_set set = {0};
    struct errors errs = {0};
    rules_load_file(&set, write_file("t.rules", rule), &errs);
    assert_int_equal(errs.count, 0);
    struct stat st;
    assert_int_equal(stat(exe, &st), 0);
    struct program_table t = {0};
    /* The same path, another file (a bind mount in the user's namespace). */
    struct program_facts other = facts(exe, false, NULL, 0);
    other.exe_file_known = true;
    other.exe_dev = st.st_dev;
    other.exe_ino = st.st_ino + 1;
    /* Any path, the very file. */
    struct program_facts same = facts("/somewhere/else", false, NULL, 0);
    same.exe_file_known = true;
    same.exe_dev = st.st_dev;
    same.exe_ino = st.st_ino;
    const struct program *a = programs_get(&t, &set, &other);
    const struct program *b = programs_get(&t, &set, &same);
    assert_string_equal(class_of(&set, a, "agent"), "none");
    assert_string_equal(class_of(&set, b, "agent"), "agent");
    programs_put(&t, a);
    programs_put(&t, b);
    programs_free(&t);
    rules_free(&set);
    errors_free(&errs);
    remove_test_dir();
}

/* Two command lines, one known and one not yet, are different entries;
 * argv patterns see the command line joined by spaces. */
static void test_argv_known_later(void **state)
{
    (void)state;
    struct rule_set set = load_rules(RULES);
    struct program_table t = {0};
    struct program_facts unknown = facts("/home/u/miner", true, NULL, 0);
    static const char argv[] = "./miner\0-o\0stratum+tcp://pool:3333";
    struct program_facts known = facts("/home/u/miner", true, argv, sizeof(argv) - 1);
    const struct program *a = programs_get(&t, &set, &unknown);
    const struct program *b = programs_get(&t, &set, &known);
    assert_ptr_not_equal(a, b);
    assert_string_equal(class_of(&set, a, "miner"), "none");
    assert_string_equal(class_of(&set, b, "miner"), "pool");
    /* A long exe is kept for display cut short. */
    char exe[2000];
    memset(exe, 'a', sizeof(exe) - 1);
    exe[0] = '/';
    exe[sizeof(exe) - 1] = '\0';
    struct program_facts long_exe = facts(exe, true, NULL, 0);
    const struct program *c = programs_get(&t, &set, &long_exe);
    assert_int_equal(strlen(c->exe), EXE_SHOWN);
    programs_put(&t, a);
    programs_put(&t, b);
    programs_put(&t, c);
    programs_free(&t);
    rules_free(&set);
}

/* /etc/subuid: ranges by name or uid; what is not understood, names
 * nobody or overlaps an earlier range is skipped. */
static void test_subuid_ranges(void **state)
{
    (void)state;
    static const char text[] =
        "root:100000:65536\n"          /* a name: root is uid 0 */
        "1234:200000:1000\n"           /* a uid */
        "# a comment\n"
        "\n"
        "nobody-such-user-lg:300000:10\n"
        "1235:200500:10\n"             /* overlaps 1234's */
        "garbage\n"
        "1236:400000:0\n"
        "1237:4294967290:100\n";       /* past the last uid */
    struct subuid_map m = {0};
    subuid_parse(&m, text, sizeof(text) - 1);
    assert_int_equal(m.count, 2);
    assert_int_equal(m.skipped, 5);
    assert_int_equal(subuid_owner(&m, 100000), 0);
    assert_int_equal(subuid_owner(&m, 165535), 0);
    assert_int_equal(subuid_owner(&m, 165536), 165536);
    assert_int_equal(subuid_owner(&m, 200999), 1234);
    assert_int_equal(subuid_owner(&m, 201000), 201000);
    assert_int_equal(subuid_owner(&m, 1000), 1000);
    subuid_free(&m);
}

/* A node without subordinate ids (no /etc/subuid, or an empty one): every
 * uid is its own owner.  (It once handed qsort a null pointer: UBSan.) */
static void test_subuid_none(void **state)
{
    (void)state;
    struct subuid_map m = {0};
    subuid_parse(&m, "", 0);
    assert_int_equal(m.count, 0);
    assert_int_equal(subuid_owner(&m, 100000), 100000);
    assert_int_equal(subuid_refresh(&m, "/nonexistent/subuid"), 0);
    assert_int_equal(subuid_owner(&m, 100000), 100000);
    subuid_free(&m);
}

/* Whether /proc/PID/cgroup puts a process in its owner's group. */
static void test_counters_holds(void **state)
{
    (void)state;
    struct user_counters v2 = {.version = 2, .cgroup_path = "/user.slice"};
    static const char in_scope[] = "0::/user.slice/user-1001.slice/session-3.scope\n";
    static const char in_cron[] = "0::/system.slice/cron.service\n";
    static const char in_other[] = "0::/user.slice/user-10010.slice/session-9.scope\n";
    static const char slice_itself[] = "0::/user.slice/user-1001.slice\n";
    assert_true(counters_holds(&v2, in_scope, strlen(in_scope), 1001));
    assert_true(counters_holds(&v2, slice_itself, strlen(slice_itself), 1001));
    assert_false(counters_holds(&v2, in_cron, strlen(in_cron), 1001));
    assert_false(counters_holds(&v2, in_other, strlen(in_other), 1001));
    assert_false(counters_holds(&v2, in_scope, strlen(in_scope), 100));
    struct user_counters v1 = {.version = 1, .cgroup_path = "/lg/loginguard"};
    static const char v1_text[] =
        "9:name=systemd:/\n8:pids:/lg/loginguard/user-1001\n2:cpu,cpuacct:/lg/loginguard/user-1001\n"
        "4:memory:/elsewhere\n";
    static const char v1_left[] = "2:cpuacct:/lg/escape\n1:cpu:/lg/loginguard/user-1001\n";
    assert_true(counters_holds(&v1, v1_text, strlen(v1_text), 1001));
    assert_false(counters_holds(&v1, v1_left, strlen(v1_left), 1001));
    struct user_counters unknown = {.version = 2};
    assert_true(counters_holds(&unknown, in_cron, strlen(in_cron), 1001));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_entry_and_rename),
        cmocka_unit_test(test_untrusted_path_matches_no_exe_rule),
        cmocka_unit_test(test_argv_known_later),
        cmocka_unit_test(test_foreign_namespace_matches_by_file),
        cmocka_unit_test(test_subuid_ranges),
        cmocka_unit_test(test_subuid_none),
        cmocka_unit_test(test_counters_holds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
