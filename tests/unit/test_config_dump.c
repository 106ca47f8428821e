#include "config.h"

#include "config_dump.h"
#include "configfile.h"
#include "testutil.h"
#include "units.h"

#define SHIPPED TOP_SRCDIR "/rules"

/* config_load_traced, every error printed (a failing load says why). */
static int load(const char *path, struct policy *p, struct config_origins *o)
{
    struct errors errs = {0};
    int rc = config_load_traced(path, true, p, o, &errs);
    for (size_t i = 0; i < errs.count; i++)
        fprintf(stderr, "%s\n", errs.messages[i]);
    errors_free(&errs);
    return rc;
}

/* The full dump (settings and comments) as a string the caller frees. */
static char *dump_text(const struct policy *p, const struct config_origins *o)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    config_dump(f, p, o);
    assert_int_equal(fclose(f), 0);
    return text;
}

static bool same_list(const struct name_list *a, const struct name_list *b)
{
    if (a->count != b->count)
        return false;
    for (size_t i = 0; i < a->count; i++)
        if (strcmp(a->names[i], b->names[i]) != 0)
            return false;
    return true;
}

static bool same_string(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* One key's field in a and b: the same value, by its type. */
static bool same_field(const struct config_key *k, const void *a, const void *b)
{
    switch (k->type) {
    case T_DURATION:
    case T_SIZE:
    case T_COUNT:
        return *(const uint64_t *)a == *(const uint64_t *)b;
    case T_CORES:
        return *(const double *)a == *(const double *)b;
    case T_UID:
        return *(const uid_t *)a == *(const uid_t *)b;
    case T_BOOL:
        return *(const bool *)a == *(const bool *)b;
    case T_STRING:
    case T_PATH:
    case T_FILE:
        return same_string(*(char *const *)a, *(char *const *)b);
    case T_NAME:
        return strcmp((const char *)a, (const char *)b) == 0;
    case T_LIST:
        return same_list((const struct name_list *)a, (const struct name_list *)b);
    case T_MODE:
        return *(const enum mode *)a == *(const enum mode *)b;
    case T_BACKEND:
        return *(const enum backend *)a == *(const enum backend *)b;
    case T_SLURM:
        return *(const enum slurm_use *)a == *(const enum slurm_use *)b;
    }
    return false;
}

static bool same_key(const struct config_key *k, struct policy *a, struct policy *b, size_t level)
{
    return same_field(k, config_key_field(k, a, &a->levels[level]),
                      config_key_field(k, b, &b->levels[level]));
}

/* Every key of the table (each level's for every level), then what the
 * files named: rules, notice templates. */
static void assert_same_settings(struct policy *a, struct policy *b)
{
    assert_int_equal(a->level_count, b->level_count);
    for (const struct config_key *k = config_keys; k->section; k++) {
        bool level = strcmp(k->section, "level") == 0;
        for (size_t n = 0; n < (level ? a->level_count : 1); n++) {
            if (!same_key(k, a, b, n) && level)
                fail_msg("[level %zu] %s differs after the dump", n + 1, k->name);
            else if (!same_key(k, a, b, n))
                fail_msg("[%s] %s differs after the dump", k->section, k->name);
        }
    }
}

static void assert_same_rules(const struct rule_set *a, const struct rule_set *b)
{
    assert_int_equal(a->count, b->count);
    for (size_t i = 0; i < a->count; i++) {
        const struct rule *x = &a->rules[i], *y = &b->rules[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->class, y->class);
        assert_true(same_string(x->exe, y->exe));
        assert_true(same_string(x->comm, y->comm));
        assert_true(same_string(x->argv_text, y->argv_text));
        assert_true(x->cpu == y->cpu);
        assert_int_equal(x->grace, y->grace);
        assert_string_equal(x->origin, y->origin);
    }
}

static void assert_same_policy(struct policy *a, struct policy *b)
{
    assert_same_settings(a, b);
    assert_same_rules(&a->rules, &b->rules);
    for (int k = 0; k < NOTICE_KIND_COUNT; k++)
        assert_true(same_string(a->notices.kinds[k].path, b->notices.kinds[k].path));
}

/* Load path, dump it into test_dir/again/loginguard.conf, load that (no
 * drop-ins beside it), and compare; returns the dump's text. */
static char *round_trip(const char *path)
{
    struct policy first, second;
    struct config_origins o1, o2;
    assert_int_equal(load(path, &first, &o1), 0);
    char *text = dump_text(&first, &o1);
    const char *again = write_file("again/loginguard.conf", text);
    assert_int_equal(load(again, &second, &o2), 0);
    assert_same_policy(&first, &second);
    policy_free(&first);
    policy_free(&second);
    config_origins_free(&o1);
    config_origins_free(&o2);
    return text;
}

static void test_shipped_config_reads_back(void **state)
{
    (void)state;
    make_test_dir();
    free(round_trip(SHIPPED "/loginguard.conf"));
    remove_test_dir();
}

/* Every key set to something other than its default, in every form the
 * parser takes: units that are not the dump's own (1500ms, 1.5G, 150%),
 * values no unit holds whole (0.3 cores, 0.25ms), lists split by tabs,
 * strings with spaces and '#', a changed level and a new one. */
static const char site_dropin[] =
    "[daemon]\n"
    "mode = enforce\n"
    "sample_interval = 1500ms\n"
    "scan_interval = 1.5m\n"
    "proc_connector = off\n"
    "min_uid = 5000\n"
    "admin_group = hpc admins\n"
    "event_log = /var/tmp/lg events.jsonl\n"
    "state_dir = /var/tmp/lg-state\n"
    "control_socket = /var/tmp/lg.sock\n"
    "metrics_file = /var/tmp/lg metrics.prom\n"
    "rules_dirs = " SHIPPED "/rules.d\n"
    "backend = cgroupfs\n"
    "cgroup_parent = /site/loginguard\n"
    "stop_grace = 2.5s\n"
    "events_per_user = 0\n"
    "events_interval = 1d\n"
    "[share]\n"
    "cpu = 150%\n"
    "memory = 1.5G\n"
    "tasks = 99\n"
    "[violation]\n"
    "cpu = 0.3 cores\n"
    "memory = 1000\n"
    "window = 20s\n"
    "decay = 90m\n"
    "memory_pressure = 0\n"
    "[classes]\n"
    "compute_cpu = 0.1%\n"
    "compute_grace = 0.25ms\n"
    "exempt_cpu = 2.75\n"
    "exempt_memory = 3T\n"
    "[exempt]\n"
    "users = alice,bob\tcarol\n"
    "groups = staff\n"
    "[level 2]\n"
    "name = slowed down\n"
    "cpu = 12.5%\n"
    "memory = 512M\n"
    "stop = yes\n"
    "duration = 45m\n"
    "[level 4]\n"
    "name = banished\n"
    "cpu = 0.05 cores\n"
    "memory = 256 MiB\n"
    "stop = true\n"
    "duration = 2d\n"
    "[notify]\n"
    "channels = tty desktop, email\n"
    "batch_partition = long\n"
    "interactive_partition = debug\n"
    "docs_url = https://hpc.example.org/login#batch jobs\n"
    "sendmail = /usr/lib/sendmail -oi -t\n"
    "email_domain = example.org\n"
    "email_from = hpc-support@example.org\n"
    "rate_limit = 2h\n"
    "slurm = no\n"
    "slurm_refresh = 10m\n"
    "in_observe = yes\n"
    "email_chart = yes\n"
    "notices_dirs = " SHIPPED "/notices\n"
    "login_banner = login1: a shared node; run jobs with sbatch\n"
    "[trace]\n"
    "enabled = no\n"
    "max_size = 1.5G\n"
    "max_age = 36h\n"
    "[cluster]\n"
    "database = host=/run/postgresql dbname=loginguard\n"
    "node = login2\n"
    "link_user = lglink\n";

/* The drop-in is only a test of every key if it changes every key. */
static void assert_every_key_changed(struct policy *site)
{
    struct policy defaults;
    policy_init_defaults(&defaults);
    assert_int_equal(site->level_count, 4);
    for (const struct config_key *k = config_keys; k->section; k++) {
        bool level = strcmp(k->section, "level") == 0;
        if (same_key(k, site, &defaults, level ? 1 : 0))
            fail_msg("the drop-in leaves [%s] %s at its default", k->section, k->name);
    }
    policy_free(&defaults);
}

static void test_site_dropin_reads_back(void **state)
{
    (void)state;
    make_test_dir();
    char main_conf[256];
    FILE *shipped = fopen(SHIPPED "/loginguard.conf", "r");
    assert_non_null(shipped);
    char text[16384];
    text[fread(text, 1, sizeof(text) - 1, shipped)] = '\0';
    fclose(shipped);
    snprintf(main_conf, sizeof(main_conf), "%s", write_file("loginguard.conf", text));
    write_file("conf.d/50-site.conf", site_dropin);

    struct policy site;
    struct config_origins o;
    assert_int_equal(load(main_conf, &site, &o), 0);
    assert_every_key_changed(&site);
    policy_free(&site);
    config_origins_free(&o);

    char *dump = round_trip(main_conf);
    /* Values in the units an admin reads, not in microseconds or bytes. */
    assert_non_null(strstr(dump, "\nsample_interval = 1500ms\n"));
    assert_non_null(strstr(dump, "\nmemory = 1536M\n"));
    assert_non_null(strstr(dump, "\ncpu = 1.5 cores\n"));
    assert_non_null(strstr(dump, "\n[level 4]\nname = banished\n"));
    assert_non_null(strstr(dump, "\nusers = alice, bob, carol\n"));
    free(dump);
    remove_test_dir();
}

/* The line, with each "@" replaced by dir, is in text. */
static void assert_has_line(const char *text, const char *line, const char *dir)
{
    char expected[1024] = "";
    for (const char *c = line; *c; c++) {
        size_t used = strlen(expected);
        snprintf(expected + used, sizeof(expected) - used, "%s",
                 *c == '@' ? dir : (char[]){*c, '\0'});
    }
    if (!strstr(text, expected))
        fail_msg("no line '%s' in the dump:\n%s", expected, text);
}

/* Each value names the file and line it came from; rule files and
 * notice templates that a site's file replaces say which. */
static void test_origins_in_dump(void **state)
{
    (void)state;
    const char *dir = make_test_dir();
    char main_conf[256];
    snprintf(main_conf, sizeof(main_conf), "%s",
             write_file("loginguard.conf", "[share]\ntasks = 10\n"));
    char dropin[1024];
    snprintf(dropin, sizeof(dropin), "[daemon]\nrules_dirs = %s/site-rules, " SHIPPED
             "/rules.d\n[notify]\nnotices_dirs = %s/site-notices, " SHIPPED "/notices\n",
             dir, dir);
    write_file("conf.d/10-dirs.conf", dropin);
    write_file("conf.d/50-site.conf", "# the site's window\n[violation]\n\nwindow = 20s\n"
               "[level 4]\ncpu = 0.2 cores\n");
    write_file("site-rules/90-forbidden.rules",
               "{\"name\": \"miner\", \"class\": \"forbidden\", \"comm\": \"xmrig\"}\n");
    write_file("site-rules/95-local.rules",
               "{\"name\": \"sim\", \"class\": \"compute\", \"comm\": \"mysim\"}\n"
               "{\"name\": \"ok\", \"class\": \"exempt\", \"exe\": \"/usr/bin/myeditor\"}\n");
    FILE *shipped = fopen(SHIPPED "/notices/warned.txt", "r");
    assert_non_null(shipped);
    char text[8192];
    text[fread(text, 1, sizeof(text) - 1, shipped)] = '\0';
    fclose(shipped);
    write_file("site-notices/warned.txt", text);

    struct policy p;
    struct config_origins o;
    assert_int_equal(load(main_conf, &p, &o), 0);
    char *dump = dump_text(&p, &o);
    assert_has_line(dump, "\n# [violation] window: @/conf.d/50-site.conf:4\n", dir);
    assert_has_line(dump, "\n# [share] tasks: @/loginguard.conf:2\n", dir);
    assert_has_line(dump, "\n# [share] cpu: built-in default\n", dir);
    assert_has_line(dump, "\n# [level 4] cpu: @/conf.d/50-site.conf:6\n", dir);
    assert_has_line(dump, "\n# [level 4] duration: @/conf.d/50-site.conf:5 (a new level's "
                    "default)\n", dir);
    assert_has_line(dump, "\n# [daemon] rules_dirs: @/conf.d/10-dirs.conf:2\n", dir);
    assert_has_line(dump, "\n#   @/site-rules/90-forbidden.rules: 1 forbidden; a site file, "
                    "replacing " SHIPPED "/rules.d/90-forbidden.rules\n", dir);
    assert_has_line(dump, "\n#   @/site-rules/95-local.rules: 1 exempt, 1 compute\n", dir);
    assert_has_line(dump, "\n#   warned: @/site-notices/warned.txt; a site file, replacing "
                    SHIPPED "/notices/warned.txt\n", dir);
    assert_has_line(dump, "\n#   throttled: " SHIPPED "/notices/throttled.txt\n", dir);
    /* The header names the files read, in order. */
    assert_has_line(dump, "#   @/loginguard.conf\n#   @/conf.d/10-dirs.conf\n", dir);
    free(dump);
    policy_free(&p);
    config_origins_free(&o);
    remove_test_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_config_reads_back),
        cmocka_unit_test(test_site_dropin_reads_back),
        cmocka_unit_test(test_origins_in_dump),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
