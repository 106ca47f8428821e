#include "config.h"

#include "rules.h"
#include "testutil.h"

/* Load one line as a rules file; return the error count, first in err. */
static char err[1024];

static int load_line(const char *line, struct rule_set *set)
{
    make_test_dir();
    char path[256];
    snprintf(path, sizeof(path), "%s", write_file("t.rules", line));
    struct errors errs = {0};
    memset(set, 0, sizeof(*set));
    rules_load_file(set, path, &errs);
    err[0] = '\0';
    if (errs.count) {
        const char *tail = strstr(errs.messages[0], "t.rules");
        snprintf(err, sizeof(err), "%s", tail ? tail + strlen("t.rules") : errs.messages[0]);
    }
    int n = (int)errs.count;
    errors_free(&errs);
    remove_test_dir();
    return n;
}

static void expect_rule_error(const char *line, const char *expected)
{
    struct rule_set set;
    assert_int_equal(load_line(line, &set), 1);
    assert_int_equal(set.count, 0);
    assert_string_equal(err, expected);
    rules_free(&set);
}

static void test_valid_rules(void **state)
{
    (void)state;
    struct rule_set set;
    assert_int_equal(
        load_line("# why: a comment\n\n"
                  "{\"name\": \"sshd\", \"class\": \"exempt\", \"exe\": \"/usr/sbin/sshd\"}\n"
                  "   # indented comment\n"
                  "{\"name\": \"gmx\", \"class\": \"compute\", \"comm\": \"gmx*\", \"cpu\": 1, "
                  "\"grace\": \"5m\"}\n"
                  "{\"name\": \"pool\", \"class\": \"forbidden\", \"argv\": \"stratum\\\\+tcp://\"}\n",
                  &set),
        0);
    assert_int_equal(set.count, 3);
    assert_string_equal(set.rules[1].name, "gmx");
    assert_int_equal(set.rules[1].class, CLASS_COMPUTE);
    assert_true(set.rules[1].cpu == 1.0);
    assert_int_equal(set.rules[1].grace, 300000000);
    assert_true(set.rules[0].cpu < 0);
    assert_non_null(strstr(set.rules[2].origin, "t.rules:6"));
    rules_free(&set);
}

static void test_rule_errors(void **state)
{
    (void)state;
    expect_rule_error("{\"name\": \"x\", \"class\": \"compute\", \"comm\": \"x\"\n",
                      ":1: not valid JSON at character 45: '}' expected near end of file");
    expect_rule_error("[\"x\"]\n", ":1: a rule must be a JSON object {...}");
    expect_rule_error("{\"name\": \"x\", \"class\": \"compute\", \"comm\": \"x\", \"why\": 1}\n",
                      ":1: unknown key \"why\"; a rule has name, class, exe, comm, argv, cpu, grace");
    expect_rule_error("{\"class\": \"compute\", \"comm\": \"x\"}\n",
                      ":1: \"name\" is required: lowercase letters, digits, '.', '_', '-'");
    expect_rule_error("{\"name\": \"Bad Name\", \"class\": \"compute\", \"comm\": \"x\"}\n",
                      ":1: \"name\" is required: lowercase letters, digits, '.', '_', '-'");
    expect_rule_error("{\"name\": 5, \"class\": \"compute\", \"comm\": \"x\"}\n",
                      ":1: \"name\" must be a non-empty string");
    expect_rule_error("{\"name\": \"x\", \"class\": \"evil\", \"comm\": \"x\"}\n",
                      ":1: \"class\" must be \"exempt\", \"compute\" or \"forbidden\"");
    expect_rule_error("{\"name\": \"x\", \"class\": \"compute\"}\n",
                      ":1: rule \"x\" matches nothing: give \"exe\", \"comm\" or \"argv\"");
    expect_rule_error("{\"name\": \"x\", \"class\": \"exempt\", \"comm\": \"sshd\"}\n",
                      ":1: exempt rule \"x\" needs \"exe\" with an absolute path: a name or argv "
                      "alone would let a renamed program slip through");
    expect_rule_error("{\"name\": \"x\", \"class\": \"exempt\", \"exe\": \"*/sshd\"}\n",
                      ":1: exempt rule \"x\" needs \"exe\" with an absolute path: a name or argv "
                      "alone would let a renamed program slip through");
    expect_rule_error("{\"name\": \"x\", \"class\": \"compute\", \"comm\": \"quantum_espresso_pw\"}\n",
                      ":1: \"comm\": \"quantum_espresso_pw\" is longer than the kernel's 15-byte "
                      "process name and never matches; use its first 15 bytes or \"exe\"");
    expect_rule_error("{\"name\": \"x\", \"class\": \"compute\", \"argv\": \"(\"}\n",
                      ":1: rule \"x\": \"argv\": bad regular expression: missing ): (");
    /* Patterns that would explode (glibc builds them for minutes): an
     * error at load, at once. */
    expect_rule_error("{\"name\": \"x\", \"class\": \"compute\", "
                      "\"argv\": \"((a{1,100}){1,100}){1,100}\"}\n",
                      ":1: rule \"x\": \"argv\": bad regular expression: invalid repetition size: "
                      "{1,100}");
    char big[8192] = "{\"name\": \"x\", \"class\": \"compute\", \"argv\": \"";
    for (int i = 0; i < 300; i++)
        strcat(big, "[a-z]{1,1000}");
    strcat(big, "\"}\n");
    expect_rule_error(big, ":1: rule \"x\": \"argv\": bad regular expression: the pattern is too "
                           "large (it would need more than 4096 KiB to match in linear time); "
                           "simplify its repetitions");
    expect_rule_error("{\"name\": \"x\", \"class\": \"compute\", \"argv\": \"a{1001}\"}\n",
                      ":1: rule \"x\": \"argv\": bad regular expression: invalid repetition size: "
                      "{1001}");
    expect_rule_error("{\"name\": \"x\", \"class\": \"exempt\", \"exe\": \"/a\", \"cpu\": 1}\n",
                      ":1: \"cpu\" and \"grace\" apply only to class \"compute\"");
    expect_rule_error("{\"name\": \"x\", \"class\": \"compute\", \"comm\": \"a\", \"cpu\": \"1\"}\n",
                      ":1: \"cpu\" must be a number of cores, like 0.5");
    expect_rule_error("{\"name\": \"x\", \"class\": \"compute\", \"comm\": \"a\", \"grace\": \"1 y\"}\n",
                      ":1: \"grace\": unknown unit 'y' in '1 y'; use one of 'ms', 's', 'sec', "
                      "'m', 'min', 'h', 'd'");
    expect_rule_error("{\"name\": \"x\", \"class\": \"compute\", \"comm\": \"a\", \"grace\": 60}\n",
                      ":1: \"grace\": must be a duration string like \"60s\"");
    expect_rule_error("{\"name\": \"x\", \"name\": \"y\", \"class\": \"compute\", \"comm\": \"a\"}\n",
                      ":1: not valid JSON at character 20: duplicate object key near '\"name\"'");
}

static void test_duplicate_names(void **state)
{
    (void)state;
    struct rule_set set;
    assert_int_equal(load_line("{\"name\": \"x\", \"class\": \"compute\", \"comm\": \"a\"}\n"
                               "{\"name\": \"x\", \"class\": \"compute\", \"comm\": \"b\"}\n",
                               &set),
                     1);
    assert_non_null(strstr(err, ":2: rule \"x\" is already defined at "));
    assert_non_null(strstr(err, "t.rules:1; rename one"));
    assert_int_equal(set.count, 1);
    rules_free(&set);
}

static const char *classify(const struct rule_set *set, const char *exe, const char *comm,
                            const char *cmdline)
{
    struct proc_identity id = {exe, comm, cmdline};
    const struct rule *r = rules_classify(set, &id);
    return r ? r->name : "none";
}

static void test_classification(void **state)
{
    (void)state;
    struct rule_set set;
    assert_int_equal(
        load_line("{\"name\": \"sshd\", \"class\": \"exempt\", \"exe\": \"/usr/sbin/sshd\"}\n"
                  "{\"name\": \"gmx\", \"class\": \"compute\", \"exe\": \"*/bin/gmx*\"}\n"
                  "{\"name\": \"python-train\", \"class\": \"compute\", \"comm\": \"python*\", "
                  "\"argv\": \"train[^ ]*[.]py\"}\n"
                  "{\"name\": \"xmrig\", \"class\": \"forbidden\", \"comm\": \"xmrig\"}\n"
                  "{\"name\": \"stratum\", \"class\": \"forbidden\", \"argv\": \"stratum[+]tcp://\"}\n",
                  &set),
        0);
    assert_string_equal(classify(&set, "/usr/sbin/sshd", "sshd", "sshd: alice"), "sshd");
    /* A busy loop copied to the name of an exempt program stays unclassified. */
    assert_string_equal(classify(&set, "/home/alice/sshd", "sshd", "./sshd"), "none");
    assert_string_equal(classify(&set, "/opt/gromacs/bin/gmx_mpi", "gmx_mpi", "gmx_mpi mdrun"),
                        "gmx");
    assert_string_equal(classify(&set, "/usr/bin/python3.11", "python3", "python3 train_gpt.py"),
                        "python-train");
    assert_string_equal(classify(&set, "/usr/bin/python3.11", "python3", "python3 plot.py"), "none");
    /* Severity wins: an exempt path running a miner's arguments is forbidden. */
    assert_string_equal(
        classify(&set, "/usr/sbin/sshd", "sshd", "sshd -o stratum+tcp://pool.example:3333"),
        "stratum");
    assert_string_equal(classify(&set, "/tmp/x", "xmrig", "xmrig"), "xmrig");
    /* Unreadable exe (a zombie, a kernel thread) matches no exe rule. */
    assert_string_equal(classify(&set, NULL, "sshd", NULL), "none");
    rules_free(&set);
}

/* A command line of n copies of unit after prefix, NUL-terminated. */
static char *repeated(const char *prefix, const char *unit, size_t n)
{
    size_t p = strlen(prefix), u = strlen(unit);
    char *s = malloc(p + u * n + 1);
    memcpy(s, prefix, p);
    for (size_t i = 0; i < n; i++)
        memcpy(s + p + i * u, unit, u);
    s[p + u * n] = '\0';
    return s;
}

/* The shipped rules on 32 KiB command lines crafted against their argv
 * patterns (long runs of near matches, on which glibc's regexec took
 * 0.15 to 0.3 s each): the right answer, near misses and hits alike.
 * (What it costs is in bench_rules.) */
static void test_shipped_rules_on_hostile_command_lines(void **state)
{
    (void)state;
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/rules/rules.d", TOP_SRCDIR);
    char *dirs[] = {dir};
    struct rule_set set = {0};
    struct errors errs = {0};
    assert_int_equal(rules_load_dirs(&set, dirs, 1, &errs), 0);
    struct {
        const char *comm, *prefix, *unit;
        size_t n;
        const char *expected;
    } cases[] = {
        {"python3", "python3", "_train", 5400, "none"},
        {"java", "java -jar ", "gatk-package", 2700, "none"},
        {"miner", "miner ", "supportxmr.", 2900, "none"},
        {"x", "x ", "--algo=", 4500, "none"},
        {"x", "x", " 4A", 10900, "none"},
        {"x", "x ", "\xff\xfe\x80", 10900, "none"},
        {"python3", "python3 ", "_train", 5400, "none"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *cmdline = repeated(cases[i].prefix, cases[i].unit, cases[i].n);
        assert_true(strlen(cmdline) > 16000);
        assert_string_equal(classify(&set, "/home/u/bin/x", cases[i].comm, cmdline),
                            cases[i].expected);
        free(cmdline);
    }
    /* The same patterns still find what they are for. */
    char *train = repeated("python3 ", "_train", 5400);
    size_t n = strlen(train);
    train = realloc(train, n + 32);
    strcpy(train + n, " /home/u/train_gpt.py --lr 3e-4");
    assert_string_equal(classify(&set, "/usr/bin/python3.11", "python3", train),
                        "python-training-script");
    free(train);
    char *pool = repeated("miner -o ", "supportxmr.", 2900);
    n = strlen(pool);
    pool = realloc(pool, n + 16);
    strcpy(pool + n, "com:3333");
    assert_string_equal(classify(&set, "/home/u/bin/x", "x", pool), "mining-pool-host");
    free(pool);
    char wallet[200] = "x --user 4A";
    for (int i = 0; i < 93; i++)
        strcat(wallet, "1");
    strcat(wallet, " --pass x");
    assert_string_equal(classify(&set, "/home/u/bin/x", "x", wallet), "monero-wallet-address");
    rules_free(&set);
    errors_free(&errs);
}

static void test_site_file_replaces_shipped_file(void **state)
{
    (void)state;
    make_test_dir();
    write_file("site/50-compute.rules", "# site: nothing is compute here\n");
    write_file("site/60-local.rules",
               "{\"name\": \"local\", \"class\": \"compute\", \"comm\": \"mysim\"}\n");
    write_file("shipped/50-compute.rules",
               "{\"name\": \"gmx\", \"class\": \"compute\", \"comm\": \"gmx\"}\n");
    write_file("shipped/90-forbidden.rules",
               "{\"name\": \"xmrig\", \"class\": \"forbidden\", \"comm\": \"xmrig\"}\n");
    char site[128], shipped[128];
    snprintf(site, sizeof(site), "%s/site", test_dir);
    snprintf(shipped, sizeof(shipped), "%s/shipped", test_dir);
    char *dirs[] = {site, shipped};
    struct rule_set set = {0};
    struct errors errs = {0};
    assert_int_equal(rules_load_dirs(&set, dirs, 2, &errs), 0);
    assert_int_equal(set.count, 2);
    assert_string_equal(set.rules[0].name, "local");
    assert_string_equal(set.rules[1].name, "xmrig");
    rules_free(&set);
    remove_test_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_rules),
        cmocka_unit_test(test_rule_errors),
        cmocka_unit_test(test_duplicate_names),
        cmocka_unit_test(test_classification),
        cmocka_unit_test(test_shipped_rules_on_hostile_command_lines),
        cmocka_unit_test(test_site_file_replaces_shipped_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
