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
                      ":1: \"argv\": bad regular expression: Unmatched ( or \\(");
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
        cmocka_unit_test(test_site_file_replaces_shipped_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
