#include "config.h"

#include "notices.h"
#include "testutil.h"
#include "util.h"

static const char *const all_kinds[] = {"warned",   "throttled", "stopped",      "released",
                                        "forbidden", "standing", "login_refused"};

/* A minimal valid template for kind in dir (relative to test_dir). */
static void write_template(const char *dir, const char *kind, const char *text)
{
    char name[128];
    snprintf(name, sizeof(name), "%s/%s.txt", dir, kind);
    write_file(name, text);
}

static void write_all(const char *dir)
{
    for (size_t i = 0; i < NOTICE_KIND_COUNT; i++) {
        char *text = xasprintf("Subject: shipped %s\n\nshipped body for {user}\n", all_kinds[i]);
        write_template(dir, all_kinds[i], text);
        free(text);
    }
}

/* Load site then shipped below test_dir; errors joined by '|' into err. */
static char err[4096];

static int load(struct notice_templates *t)
{
    char *site = xasprintf("%s/site", test_dir), *shipped = xasprintf("%s/shipped", test_dir);
    char *dirs[] = {site, shipped};
    struct errors errs = {0};
    int rc = notice_templates_load(t, dirs, 2, &errs);
    err[0] = '\0';
    for (size_t i = 0; i < errs.count; i++) {
        const char *rel = strstr(errs.messages[i], test_dir);
        rel = rel ? rel + strlen(test_dir) + 1 : errs.messages[i];
        snprintf(err + strlen(err), sizeof(err) - strlen(err), "%s%s", i ? "|" : "", rel);
    }
    assert_int_equal(rc == 0, errs.count == 0);
    errors_free(&errs);
    free(site);
    free(shipped);
    return rc;
}

static void test_site_template_replaces_shipped(void **state)
{
    (void)state;
    make_test_dir();
    write_all("shipped");
    write_template("site", "throttled", "# ours\nSubject: site {host}\n\nsite body\n");
    struct notice_templates t;
    assert_int_equal(load(&t), 0);
    assert_non_null(strstr(t.kinds[NOTICE_THROTTLED].path, "/site/throttled.txt"));
    assert_non_null(strstr(t.kinds[NOTICE_WARNED].path, "/shipped/warned.txt"));

    struct notice_field f[] = {{"host", "login1", false}, {"user", "ann", false}};
    struct notice n;
    assert_int_equal(notice_render(&t, NOTICE_THROTTLED, f, 2, &n), 0);
    assert_string_equal(n.subject, "site login1");
    assert_string_equal(n.body, "site body\n");
    notice_free(&n);
    assert_int_equal(notice_render(&t, NOTICE_WARNED, f, 2, &n), 0);
    assert_string_equal(n.subject, "shipped warned");
    assert_string_equal(n.body, "shipped body for ann\n");
    notice_free(&n);
    notice_templates_free(&t);
    remove_test_dir();
}

static void expect_error(const char *text, const char *expected)
{
    make_test_dir();
    write_all("shipped");
    write_template("site", "stopped", text);
    struct notice_templates t;
    assert_int_equal(load(&t), -1);
    assert_string_equal(err, expected);
    remove_test_dir();
}

static void test_template_errors(void **state)
{
    (void)state;
    expect_error("Subject: x\n\nline\n{user} and {usr}\n",
                 "site/stopped.txt:4: unknown placeholder {usr}; use one of {user}, {host}, "
                 "{program}, {command}, {pid}, {cores}, {memory}, {duration}, {action}, "
                 "{level}, {until}, {limit_cpu}, {limit_memory}, {sbatch}, {salloc}, "
                 "{docs_url}, {rule}");
    expect_error("# c\nSubject: x\n\nok\nhalf {user\nlone } brace\n",
                 "site/stopped.txt:5: unclosed '{'; write {name} for a placeholder or '{{' for "
                 "a literal brace|site/stopped.txt:6: a lone '}'; write '}}' for a literal brace");
    expect_error("Subject: {nope}\n\nbody\n",
                 "site/stopped.txt:1: unknown placeholder {nope}; use one of {user}, {host}, "
                 "{program}, {command}, {pid}, {cores}, {memory}, {duration}, {action}, "
                 "{level}, {until}, {limit_cpu}, {limit_memory}, {sbatch}, {salloc}, "
                 "{docs_url}, {rule}");
    expect_error("# comment\n\nHello {user}\n",
                 "site/stopped.txt:3: expected 'Subject: ...' (only '#' comments and blank "
                 "lines may come before it)");
    expect_error("Subject: x\nbody right away\n",
                 "site/stopped.txt:2: expected a blank line after the Subject line; the body "
                 "starts after it");
    expect_error("Subject: x\n\n\n\n",
                 "site/stopped.txt:4: the body is empty; write what happened and what to do");
    expect_error("", "site/stopped.txt: no 'Subject: ...' line; a template is a Subject line, "
                     "a blank line and the body");
}

static void test_missing_and_unknown_files(void **state)
{
    (void)state;
    make_test_dir();
    write_all("shipped");
    char path[256];
    snprintf(path, sizeof(path), "%s/shipped/released.txt", test_dir);
    unlink(path);
    write_template("site", "throttle", "Subject: x\n\ny\n");
    struct notice_templates t;
    assert_int_equal(load(&t), -1);
    char *want = xasprintf("site/throttle.txt: not a notice kind; templates are named "
                           "warned.txt, throttled.txt, stopped.txt, released.txt, "
                           "forbidden.txt, standing.txt and login_refused.txt|shipped: no released.txt: every notice needs a "
                           "template (a site's own goes in %s/site)", test_dir);
    assert_string_equal(err, want);
    free(want);
    remove_test_dir();
}

static struct notice_templates one_template(const char *text)
{
    make_test_dir();
    write_all("shipped");
    write_template("site", "warned", text);
    struct notice_templates t;
    assert_int_equal(load(&t), 0);
    remove_test_dir();
    return t;
}

static void test_render_escapes_hostile_values(void **state)
{
    (void)state;
    struct notice_templates t =
        one_template("Subject: {program} {sbatch}\n\n{{literal}} {program}\n  {sbatch}\n");
    struct notice_field f[] = {
        {"program", "x\x1b[2J\nrm -rf \xff\xc2\x9b" "1m\xe2\x80\xae" "fdp.exe r\xc3\xa9sum\xc3\xa9",
         false},
        {"sbatch", "sbatch --wrap 'a\nb'", true},
        {"not_a_placeholder", "ignored", false},
    };
    struct notice n;
    assert_int_equal(notice_render(&t, NOTICE_WARNED, f, 3, &n), 0);
    const char *shown =
        "x\\x1b[2J\\x0arm -rf \\xff\\xc2\\x9b1m\\xe2\\x80\\xaefdp.exe r\xc3\xa9sum\xc3\xa9";
    char *subject = xasprintf("%s sbatch --wrap 'a\\x0ab'", shown);
    assert_string_equal(n.subject, subject);
    char *body = xasprintf("{literal} %s\n  sbatch --wrap 'a\nb'\n", shown);
    assert_string_equal(n.body, body);
    for (const char *p = n.body; *p; p++)
        assert_true(*p == '\n' || (unsigned char)*p >= 0x20);
    free(subject);
    free(body);
    notice_free(&n);
    notice_templates_free(&t);
}

/* The bidirectional marks and isolates, and the C1 range's ends, read as
 * the summaries do (utf8_escape); text next to them stays. */
static void test_render_escapes_bidi_marks(void **state)
{
    (void)state;
    struct notice_templates t = one_template("Subject: {program}\n\n{program}\n");
    struct notice_field f[] = {
        {"program", "a\xe2\x80\x8e" "b\xe2\x80\x8f" "c\xd8\x9c" "d\xe2\x81\xa6" "e\xc2\x80"
                    "f\xc2\x9f" "g\xc2\xa0" "h", false},
    };
    struct notice n;
    assert_int_equal(notice_render(&t, NOTICE_WARNED, f, 1, &n), 0);
    assert_string_equal(n.subject, "a\\xe2\\x80\\x8eb\\xe2\\x80\\x8fc\\xd8\\x9cd\\xe2\\x81\\xa6e"
                                   "\\xc2\\x80f\\xc2\\x9fg\xc2\xa0h");
    notice_free(&n);
    notice_templates_free(&t);
}

static void test_lines_with_only_empty_values_are_left_out(void **state)
{
    (void)state;
    struct notice_templates t = one_template(
        "Subject: s\n\nfirst\nMore: {docs_url}\n{until} {limit_memory}\n"
        "until {until}, memory {limit_memory}\n\nlast\n\n\n");
    struct notice_field f[] = {{"docs_url", "", false}, {"limit_memory", "4G", false}};
    struct notice n;
    assert_int_equal(notice_render(&t, NOTICE_WARNED, f, 2, &n), 0);
    assert_string_equal(n.body, "first\n 4G\nuntil , memory 4G\n\nlast\n");
    notice_free(&n);
    assert_int_equal(notice_render(&t, NOTICE_WARNED, NULL, 0, &n), 0);
    assert_string_equal(n.body, "first\n\nlast\n");
    notice_free(&n);
    notice_templates_free(&t);
}

/* The shipped templates load, and each says what happened with the numbers. */
static void test_shipped_templates(void **state)
{
    (void)state;
    char *dir = xasprintf("%s/rules/notices", TOP_SRCDIR);
    char *dirs[] = {dir};
    struct notice_templates t;
    struct errors errs = {0};
    assert_int_equal(notice_templates_load(&t, dirs, 1, &errs), 0);
    const struct notice_field f[] = {
        {"user", "ann", false}, {"host", "login1", false}, {"program", "gmx_mpi", false},
        {"command", "gmx_mpi mdrun -deffnm 'run 1'", true}, {"pid", "4242", false},
        {"cores", "3.9", false}, {"memory", "4.1G", false}, {"duration", "12 min", false},
        {"action", "throttled to 1 core", false}, {"level", "2 (throttled)", false},
        {"until", "14:30", false}, {"limit_cpu", "1 core", false},
        {"limit_memory", "4G", false},
        {"sbatch", "sbatch -p batch -c 4 --mem=7G -t 01:00:00 --wrap 'gmx_mpi mdrun'", true},
        {"salloc", "srun -p interactive -c 4 --mem=7G -t 01:00:00 --pty gmx_mpi mdrun", true},
        {"docs_url", "https://hpc.example.org/jobs", false}, {"rule", "xmrig", false},
    };
    for (int k = 0; k < NOTICE_STANDING; k++) {
        struct notice n;
        assert_int_equal(notice_render(&t, k, f, sizeof(f) / sizeof(f[0]), &n), 0);
        assert_non_null(strstr(n.subject, "login1"));
        assert_non_null(strstr(n.body, "Hello ann,"));
        assert_non_null(strstr(n.body, "https://hpc.example.org/jobs"));
        assert_null(strchr(n.body, '{'));
        if (k != NOTICE_RELEASED) {
            assert_non_null(strstr(n.body, "gmx_mpi (process 4242)"));
            assert_non_null(strstr(n.body, "gmx_mpi mdrun -deffnm 'run 1'"));
        }
        if (k != NOTICE_FORBIDDEN && k != NOTICE_RELEASED)
            assert_non_null(strstr(n.body, "sbatch -p batch -c 4"));
        if (k == NOTICE_THROTTLED)
            assert_non_null(strstr(n.body, "until 14:30"));
        if (k == NOTICE_STOPPED)
            assert_non_null(strstr(n.body, "Until 14:30, your other processes"));
        if (k != NOTICE_RELEASED && k != NOTICE_FORBIDDEN)
        {
            assert_non_null(strstr(n.body, "3.9 cores"));
            assert_non_null(strstr(n.body, "4.1G of memory for 12 min"));
        }
        notice_free(&n);
    }
    /* Shown at login: the level, until when, why, and the way out. */
    for (int k = NOTICE_STANDING; k < NOTICE_KIND_COUNT; k++) {
        struct notice n;
        assert_int_equal(notice_render(&t, k, f, sizeof(f) / sizeof(f[0]), &n), 0);
        assert_non_null(strstr(n.body, "login1"));
        assert_non_null(strstr(n.body, "until 14:30 (level 2 (throttled))"));
        assert_non_null(strstr(n.body, "3.9 cores and 4.1G of memory for 12 min"));
        assert_non_null(strstr(n.body, "sbatch, salloc, srun"));
        assert_non_null(strstr(n.body, "https://hpc.example.org/jobs"));
        assert_null(strchr(n.body, '{'));
        if (k == NOTICE_STANDING)
            assert_non_null(strstr(n.body, "at most: CPU 1 core, memory 4G"));
        notice_free(&n);
    }
    assert_string_equal(notice_kind_name(NOTICE_RELEASED), "released");
    assert_string_equal(notice_kind_name(NOTICE_LOGIN_REFUSED), "login_refused");
    notice_templates_free(&t);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_site_template_replaces_shipped),
        cmocka_unit_test(test_template_errors),
        cmocka_unit_test(test_missing_and_unknown_files),
        cmocka_unit_test(test_render_escapes_hostile_values),
        cmocka_unit_test(test_render_escapes_bidi_marks),
        cmocka_unit_test(test_lines_with_only_empty_values_are_left_out),
        cmocka_unit_test(test_shipped_templates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
