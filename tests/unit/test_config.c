#include "config.h"

#include "configfile.h"
#include "testutil.h"
#include "units.h"

/* Load text as DIR/loginguard.conf (no drop-ins, no rules unless given)
 * and return the number of errors; the first one is in first_error. */
static char first_error[1024];

static int load_text(const char *text, struct policy *p, bool keep)
{
    make_test_dir();
    const char *path = write_file("loginguard.conf", text);
    char conf[256];
    snprintf(conf, sizeof(conf), "%s", path);
    struct errors errs = {0};
    int rc = config_load(conf, true, p, &errs);
    first_error[0] = '\0';
    if (errs.count)
        snprintf(first_error, sizeof(first_error), "%s", errs.messages[0]);
    int count = (int)errs.count;
    errors_free(&errs);
    if (rc == 0 && !keep)
        policy_free(p);
    remove_test_dir();
    assert_true((rc == 0) == (count == 0));
    return count;
}

/* The error text after "DIR/loginguard.conf:" */
static const char *error_tail(void)
{
    const char *s = strstr(first_error, "loginguard.conf");
    return s ? s + strlen("loginguard.conf") : first_error;
}

static void expect_error(const char *text, const char *expected)
{
    struct policy p;
    assert_int_equal(load_text(text, &p, false), 1);
    assert_string_equal(error_tail(), expected);
}

static void test_shipped_config_is_the_default(void **state)
{
    (void)state;
    struct policy shipped, builtin;
    struct errors errs = {0};
    int rc = config_load(TOP_SRCDIR "/rules/loginguard.conf", true, &shipped, &errs);
    for (size_t i = 0; i < errs.count; i++)
        fprintf(stderr, "%s\n", errs.messages[i]);
    assert_int_equal(rc, 0);
    policy_init_defaults(&builtin);
    assert_int_equal(shipped.mode, builtin.mode);
    assert_int_equal(shipped.sample_interval, builtin.sample_interval);
    assert_int_equal(shipped.scan_interval, builtin.scan_interval);
    assert_int_equal(shipped.proc_connector, builtin.proc_connector);
    assert_int_equal(shipped.min_uid, builtin.min_uid);
    assert_string_equal(shipped.admin_group, builtin.admin_group);
    assert_string_equal(shipped.event_log, builtin.event_log);
    assert_string_equal(shipped.state_dir, builtin.state_dir);
    assert_string_equal(shipped.control_socket, builtin.control_socket);
    assert_null(shipped.metrics_file);
    assert_null(builtin.metrics_file);
    assert_int_equal(shipped.backend, builtin.backend);
    assert_string_equal(shipped.cgroup_parent, builtin.cgroup_parent);
    assert_true(shipped.share_cpu == builtin.share_cpu);
    assert_int_equal(shipped.share_memory, builtin.share_memory);
    assert_int_equal(shipped.share_tasks, builtin.share_tasks);
    assert_true(shipped.violation_cpu == builtin.violation_cpu);
    assert_int_equal(shipped.violation_memory, builtin.violation_memory);
    assert_int_equal(shipped.window, builtin.window);
    assert_int_equal(shipped.decay, builtin.decay);
    assert_int_equal(shipped.memory_pressure, builtin.memory_pressure);
    assert_int_equal(shipped.stop_grace, builtin.stop_grace);
    assert_int_equal(shipped.events_per_user, builtin.events_per_user);
    assert_int_equal(shipped.events_interval, builtin.events_interval);
    assert_int_equal(shipped.trace_enabled, builtin.trace_enabled);
    assert_int_equal(shipped.trace_max_size, builtin.trace_max_size);
    assert_int_equal(shipped.trace_max_age, builtin.trace_max_age);
    assert_true(shipped.compute_cpu == builtin.compute_cpu);
    assert_int_equal(shipped.compute_grace, builtin.compute_grace);
    assert_true(shipped.exempt_cpu == builtin.exempt_cpu);
    assert_int_equal(shipped.exempt_memory, builtin.exempt_memory);
    assert_int_equal(shipped.exempt_users.count, 0);
    assert_int_equal(shipped.exempt_groups.count, 0);
    assert_int_equal(shipped.level_count, builtin.level_count);
    for (size_t i = 0; i < builtin.level_count; i++) {
        assert_string_equal(shipped.levels[i].name, builtin.levels[i].name);
        assert_true(shipped.levels[i].cpu == builtin.levels[i].cpu);
        assert_int_equal(shipped.levels[i].memory, builtin.levels[i].memory);
        assert_int_equal(shipped.levels[i].stop, builtin.levels[i].stop);
        assert_int_equal(shipped.levels[i].duration, builtin.levels[i].duration);
    }
    assert_int_equal(shipped.channels.count, builtin.channels.count);
    for (size_t i = 0; i < builtin.channels.count; i++)
        assert_string_equal(shipped.channels.names[i], builtin.channels.names[i]);
    /* Partitions from Slurm unless the site names them. */
    assert_null(shipped.batch_partition);
    assert_null(builtin.batch_partition);
    assert_null(shipped.interactive_partition);
    assert_null(builtin.interactive_partition);
    assert_int_equal(shipped.slurm, SLURM_AUTO);
    assert_int_equal(builtin.slurm, SLURM_AUTO);
    assert_int_equal(shipped.slurm_refresh, builtin.slurm_refresh);
    assert_null(shipped.docs_url);
    assert_string_equal(shipped.sendmail, builtin.sendmail);
    assert_null(shipped.email_domain);
    assert_string_equal(shipped.email_from, builtin.email_from);
    assert_int_equal(shipped.rate_limit, builtin.rate_limit);
    assert_int_equal(shipped.notify_in_observe, builtin.notify_in_observe);
    /* The shipped rules load with the shipped config: at least 60. */
    assert_true(shipped.rules.count >= 60);
    policy_free(&shipped);
    policy_free(&builtin);
}

static void test_no_config_file_means_defaults(void **state)
{
    (void)state;
    struct policy p;
    struct errors errs = {0};
    assert_int_equal(config_load("/nonexistent/loginguard.conf", false, &p, &errs), 0);
    assert_int_equal(p.window, 5 * 60 * USEC_PER_SEC);
    assert_int_equal(p.level_count, 3);
    policy_free(&p);
    assert_int_equal(config_load("/nonexistent/loginguard.conf", true, &p, &errs), -1);
    assert_int_equal(errs.count, 1);
    assert_string_equal(errs.messages[0],
                        "/nonexistent/loginguard.conf: cannot open: No such file or directory");
    errors_free(&errs);
}

static void test_values(void **state)
{
    (void)state;
    struct policy p;
    assert_int_equal(load_text("# comment\n; also a comment\n[daemon]\nmode = enforce\n"
                               "sample_interval = 500ms\nmin_uid = 2000\n"
                               "event_log = /tmp/e.jsonl\n"
                               "[violation]\ncpu = 150%\nmemory = 2G\nwindow = 10s\n"
                               "[exempt]\nusers = alice, bob carol\ngroups = hpcadmin\n"
                               "[notify]\ndocs_url = https://hpc.example.org/#login\n",
                               &p, true),
                     0);
    assert_int_equal(p.mode, MODE_ENFORCE);
    assert_int_equal(p.sample_interval, 500000);
    assert_int_equal(p.min_uid, 2000);
    assert_string_equal(p.event_log, "/tmp/e.jsonl");
    assert_true(p.violation_cpu > 1.49 && p.violation_cpu < 1.51);
    assert_int_equal(p.violation_memory, 2ULL << 30);
    assert_int_equal(p.exempt_users.count, 3);
    assert_string_equal(p.exempt_users.names[2], "carol");
    assert_true(name_list_contains(&p.exempt_groups, "hpcadmin"));
    assert_string_equal(p.docs_url, "https://hpc.example.org/#login");
    policy_free(&p);
}

static void test_ladder_from_file_replaces_builtin(void **state)
{
    (void)state;
    struct policy p;
    assert_int_equal(load_text("[level 1]\nname = noted\nduration = 1m\n"
                               "[level 2]\nname = stopped\ncpu = 0.25 cores\nstop = yes\n"
                               "duration = 2h\n",
                               &p, true),
                     0);
    assert_int_equal(p.level_count, 2);
    assert_string_equal(p.levels[0].name, "noted");
    assert_int_equal(p.levels[0].duration, 60 * USEC_PER_SEC);
    assert_true(p.levels[1].stop);
    assert_true(p.levels[1].cpu == 0.25);
    policy_free(&p);
}

static void test_dropins_in_name_order(void **state)
{
    (void)state;
    make_test_dir();
    char conf[256];
    snprintf(conf, sizeof(conf), "%s", write_file("loginguard.conf", "[violation]\nwindow = 1m\n"));
    write_file("conf.d/20-late.conf", "[violation]\nwindow = 3m\n[level 2]\ncpu = 0.5\n");
    write_file("conf.d/10-early.conf", "[violation]\nwindow = 2m\ncpu = 3 cores\n");
    write_file("conf.d/.hidden.conf", "[violation]\nwindow = 9m\n");
    write_file("conf.d/notes.txt", "not a config\n");
    struct policy p;
    struct errors errs = {0};
    assert_int_equal(config_load(conf, true, &p, &errs), 0);
    assert_int_equal(p.window, 3 * 60 * USEC_PER_SEC);
    assert_true(p.violation_cpu == 3);
    /* A drop-in's [level 2] changes one key of the ladder, not the ladder. */
    assert_int_equal(p.level_count, 3);
    assert_true(p.levels[1].cpu == 0.5);
    assert_string_equal(p.levels[1].name, "throttled");
    policy_free(&p);
    remove_test_dir();
}

static void test_syntax_errors(void **state)
{
    (void)state;
    expect_error("[daemon]\nmode observe\n", ":2: expected 'key = value', got 'mode observe'");
    expect_error("mode = observe\n", ":1: 'mode' comes before any [section]");
    expect_error("[daemon\n", ":1: a section header looks like [name]");
    expect_error("[violaton]\ncpu = 2\n",
                 ":1: unknown section [violaton]; sections are [daemon], [share], [violation], "
                 "[classes], [exempt], [level N], [notify], [trace] and [cluster]");
    expect_error("[daemon]\nmdoe = observe\n",
                 ":2: unknown key 'mdoe' in [daemon]; known keys: mode, sample_interval, "
                 "scan_interval, proc_connector, min_uid, admin_group, event_log, state_dir, control_socket, "
                 "metrics_file, rules_dirs, backend, cgroup_parent, stop_grace, events_per_user, events_interval");
    expect_error("[share]\nwindow = 5m\n", ":2: 'window' belongs in [violation], not [share]");
    expect_error("[daemon]\nduration = 5m\n", ":2: 'duration' belongs in [level N], not [daemon]");
}

static void test_value_errors(void **state)
{
    (void)state;
    expect_error("[share]\ncpu = 2 cors\n", ":2: unknown unit 'cors' in 'cpu = 2 cors'; use 'cores'");
    expect_error("[daemon]\nmode = enforcing\n",
                 ":2: 'mode = enforcing': mode must be observe | enforce");
    expect_error("[daemon]\nbackend = cgroups\n",
                 ":2: 'backend = cgroups': backend must be auto | systemd | cgroupfs");
    expect_error("[daemon]\nevent_log = events.jsonl\n",
                 ":2: 'event_log = events.jsonl': the path must be absolute");
    expect_error("[daemon]\nmetrics_file = lg.prom\n",
                 ":2: 'metrics_file = lg.prom': the path must be absolute, or empty for none");
    expect_error("[daemon]\nmin_uid = 4294967295\n",
                 ":2: 'min_uid = 4294967295' is not a valid uid");
    expect_error("[daemon]\nmin_uid = lots\n", ":2: 'min_uid = lots' is not a whole number");
    expect_error("[level 1]\nstop = maybe\n", ":2: 'stop = maybe' is not yes or no");
    expect_error("[level 1]\nname = a name that is far too long for a level\n",
                 ":2: 'name = a name that is far too long for a level': a name has 1 to 31 "
                 "characters");
    expect_error("[level 9]\n", ":1: [level 9]: levels are numbered 1 to 8");
}

static void test_validation_errors(void **state)
{
    (void)state;
    expect_error("[level 2]\nname = x\n",
                 ": [level 1] is missing: levels are numbered 1, 2, 3, ... without gaps");
    expect_error("[level 1]\nduration = 0s\n", ": [level 1] needs a duration > 0");
    expect_error("[daemon]\nsample_interval = 10ms\n", ": sample_interval must be at least 100ms");
    expect_error("[daemon]\nscan_interval = 1s\n",
                 ": scan_interval must not be shorter than sample_interval");
    expect_error("[violation]\nwindow = 1s\n",
                 ": [violation] window must not be shorter than sample_interval");
    expect_error("[daemon]\ncgroup_parent =\n",
                 ": [daemon] cgroup_parent must be a cgroup path without '..', such as loginguard");
    expect_error("[daemon]\ncgroup_parent = a/../b\n",
                 ": [daemon] cgroup_parent must be a cgroup path without '..', such as loginguard");
    expect_error("[daemon]\nevents_interval = 0s\n",
                 ": [daemon] events_interval must be above 0 (events_per_user = 0 writes every "
                 "event)");
    expect_error("[violation]\ncpu = 0\nmemory = 0\n",
                 ": [violation] needs cpu or memory above 0, or nothing is ever a violation");
    expect_error("[notify]\nchannels = tty, pager\n",
                 ": [notify] channels: unknown channel 'pager'; use tty, desktop, email, login");
}

static void test_every_error_is_reported(void **state)
{
    (void)state;
    struct policy p;
    assert_int_equal(load_text("[share]\ncpu = x\nmemory = 1Q\n[nope]\n[daemon]\nmode = ?\n", &p,
                               false),
                     4);
}

/* One file's text from memory: the same lines, errors and values as the
 * file, and nothing else read (no drop-ins, rules or templates). */
static void test_text_from_memory(void **state)
{
    (void)state;
    static const char text[] = "[daemon]\nmode = enforce\n[level 1]\nname = noted\n"
                               "[share]\ncpu = 2 cors\nmode\0 = x\n";
    struct policy p;
    struct errors errs = {0};
    policy_init_defaults(&p);
    assert_int_equal(config_parse_text("site.conf", text, sizeof(text) - 1, &p, &errs), -1);
    assert_int_equal(errs.count, 2);
    assert_string_equal(errs.messages[0],
                        "site.conf:6: unknown unit 'cors' in 'cpu = 2 cors'; use 'cores'");
    assert_string_equal(errs.messages[1],
                        "site.conf:7: a NUL byte in the line; is this a text file?");
    assert_int_equal(p.mode, MODE_ENFORCE);
    assert_int_equal(p.level_count, 1);
    assert_string_equal(p.levels[0].name, "noted");
    assert_int_equal(p.rules.count, 0);
    assert_int_equal(config_parse_text("empty.conf", "", 0, &p, &errs), 0);
    errors_free(&errs);
    policy_free(&p);
}

static void test_file_problems(void **state)
{
    (void)state;
    make_test_dir();
    char conf[256];
    snprintf(conf, sizeof(conf), "%s", write_file("loginguard.conf", "[daemon]\nmode = obs\0x\n"));
    /* fputs stops at the NUL: write the NUL byte by hand. */
    FILE *f = fopen(conf, "w");
    fwrite("[daemon]\nmode = observe\0junk\n", 1, 29, f);
    fclose(f);
    struct policy p;
    struct errors errs = {0};
    assert_int_equal(config_load(conf, true, &p, &errs), -1);
    assert_non_null(strstr(errs.messages[0], ":2: a NUL byte in the line"));
    errors_free(&errs);
    /* A directory where the config should be. */
    char dir[256];
    snprintf(dir, sizeof(dir), "%s/sub", test_dir);
    mkdir(dir, 0755);
    char sub[300];
    snprintf(sub, sizeof(sub), "%s/loginguard.conf", dir);
    mkdir(sub, 0755);
    assert_int_equal(config_load(sub, true, &p, &errs), -1);
    assert_non_null(strstr(errs.messages[0], "loginguard.conf: not a regular file"));
    errors_free(&errs);
    remove_test_dir();
}

static void test_rule_errors_are_config_errors(void **state)
{
    (void)state;
    make_test_dir();
    char conf[256];
    snprintf(conf, sizeof(conf), "%s", write_file("loginguard.conf", "[daemon]\n"));
    write_file("rules.d/50-site.rules", "# a comment\n{\"name\": \"x\", \"class\": \"nope\", "
                                        "\"comm\": \"x\"}\n");
    struct policy p;
    struct errors errs = {0};
    assert_int_equal(config_load(conf, true, &p, &errs), -1);
    assert_int_equal(errs.count, 1);
    assert_non_null(strstr(errs.messages[0], "rules.d/50-site.rules:2: \"class\" must be"));
    errors_free(&errs);
    remove_test_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_config_is_the_default),
        cmocka_unit_test(test_no_config_file_means_defaults),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_ladder_from_file_replaces_builtin),
        cmocka_unit_test(test_dropins_in_name_order),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_value_errors),
        cmocka_unit_test(test_validation_errors),
        cmocka_unit_test(test_every_error_is_reported),
        cmocka_unit_test(test_text_from_memory),
        cmocka_unit_test(test_file_problems),
        cmocka_unit_test(test_rule_errors_are_config_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
