/* The daemon's metrics (metrics.c, metrics_format.c) and how the file is
 * published (safe_publish_file): what a Prometheus server, node_exporter
 * and an admin's terminal get, whatever the users are called. */
#include "config.h"

#include <errno.h>
#include <sys/stat.h>

#include "metrics_format.h"
#include "safefile.h"
#include "strbuf.h"
#include "testutil.h"
#include "utf8.h"

static char *label(const char *value)
{
    struct strbuf b = {0};
    metrics_label_value(&b, value);
    return strbuf_take(&b);
}

static void expect_label(const char *value, const char *written)
{
    char *got = label(value);
    assert_string_equal(got, written);
    free(got);
}

static void test_label_values_are_escaped_as_the_format_says(void **state)
{
    (void)state;
    expect_label("alice", "alice");
    expect_label("", "");
    expect_label("a\\b", "a\\\\b");
    expect_label("say \"hi\"", "say \\\"hi\\\"");
    expect_label("two\nlines", "two\\nlines");
    /* UTF-8 text stays as it is. */
    expect_label("jos\xc3\xa9", "jos\xc3\xa9");
}

static void test_what_could_act_becomes_text(void **state)
{
    (void)state;
    /* The format has no \x escape: the backslash is escaped, so the value
     * reads back as the four characters \x1b. */
    expect_label("a\x1b[2Jb", "a\\\\x1b[2Jb");
    expect_label("\t\r\x7f", "\\\\x09\\\\x0d\\\\x7f");
    expect_label("\xc2\x9b", "\\\\xc2\\\\x9b");                     /* C1 CSI */
    expect_label("\xe2\x80\xae" "evil", "\\\\xe2\\\\x80\\\\xae" "evil"); /* RTL override */
    expect_label("\xff\xc3", "\\\\xff\\\\xc3");                     /* not UTF-8 */
}

/* ------------------------------------------------------------------ */
/* A reader of the text format, as strict as Prometheus' own (expfmt):
 * names, labels with only the three escapes, a value, HELP and TYPE
 * once per family and before its samples. */

struct family_seen {
    char name[128];
    char type[16];
    bool help, samples;
};

struct parsed {
    struct family_seen fam[64];
    size_t fam_count;
    size_t samples;
};

static bool name_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
           (!first && c >= '0' && c <= '9');
}

static const char *read_name(const char *p, char *out, size_t len)
{
    size_t n = 0;
    assert_true(name_char(*p, true));
    while (name_char(*p, n == 0) && n + 1 < len)
        out[n++] = *p++;
    out[n] = '\0';
    return p;
}

static struct family_seen *family_of(struct parsed *r, const char *name, bool create)
{
    for (size_t i = 0; i < r->fam_count; i++)
        if (strcmp(r->fam[i].name, name) == 0)
            return &r->fam[i];
    if (!create)
        return NULL;
    assert_true(r->fam_count < 64);
    struct family_seen *f = &r->fam[r->fam_count++];
    memset(f, 0, sizeof(*f));
    snprintf(f->name, sizeof(f->name), "%s", name);
    return f;
}

/* The family a sample belongs to: its name, less a histogram's suffix. */
static struct family_seen *family_of_sample(struct parsed *r, const char *name)
{
    struct family_seen *f = family_of(r, name, false);
    static const char *const suffixes[] = {"_bucket", "_sum", "_count"};
    for (size_t i = 0; !f && i < 3; i++) {
        size_t n = strlen(name), s = strlen(suffixes[i]);
        if (n > s && strcmp(name + n - s, suffixes[i]) == 0) {
            char base[128];
            snprintf(base, sizeof(base), "%.*s", (int)(n - s), name);
            f = family_of(r, base, false);
            assert_true(f == NULL || strcmp(f->type, "histogram") == 0);
        }
    }
    assert_non_null(f);
    return f;
}

/* A label value up to its closing quote, unescaped into out. */
static const char *read_value(const char *p, char *out, size_t len)
{
    size_t n = 0;
    for (; *p != '"'; p++) {
        assert_true(*p != '\n' && *p != '\0');
        char c = *p;
        if (c == '\\') {
            p++;
            assert_true(*p == '\\' || *p == '"' || *p == 'n');
            c = *p == 'n' ? '\n' : *p;
        }
        if (n + 1 < len)
            out[n++] = c;
    }
    out[n] = '\0';
    return p + 1;
}

static void parse_comment(struct parsed *r, const char *line)
{
    char name[128];
    if (strncmp(line, "# HELP ", 7) == 0) {
        const char *p = read_name(line + 7, name, sizeof(name));
        assert_int_equal(*p, ' ');
        struct family_seen *f = family_of(r, name, true);
        assert_false(f->help || f->samples);
        f->help = true;
    } else {
        assert_memory_equal(line, "# TYPE ", 7);
        const char *p = read_name(line + 7, name, sizeof(name));
        assert_int_equal(*p, ' ');
        struct family_seen *f = family_of(r, name, true);
        assert_false(f->type[0] || f->samples);
        snprintf(f->type, sizeof(f->type), "%s", p + 1);
        assert_true(strcmp(f->type, "gauge") == 0 || strcmp(f->type, "counter") == 0 ||
                    strcmp(f->type, "histogram") == 0);
        /* Prometheus' conventions: counters and only they end in _total. */
        size_t n = strlen(name);
        bool total = n > 6 && strcmp(name + n - 6, "_total") == 0;
        assert_int_equal(total, strcmp(f->type, "counter") == 0);
        assert_memory_equal(name, "loginguard_", 11);
    }
}

static void parse_sample(struct parsed *r, const char *line, void (*label_fn)(const char *,
                                                                            const char *, void *),
                         void *arg)
{
    char name[128], lname[128], lvalue[512];
    const char *p = read_name(line, name, sizeof(name));
    struct family_seen *f = family_of_sample(r, name);
    assert_true(f->help && f->type[0]);
    f->samples = true;
    if (*p == '{') {
        p++;
        while (*p != '}') {
            p = read_name(p, lname, sizeof(lname));
            assert_memory_equal(p, "=\"", 2);
            p = read_value(p + 2, lvalue, sizeof(lvalue));
            if (label_fn)
                label_fn(lname, lvalue, arg);
            if (*p == ',')
                p++;
            else
                assert_int_equal(*p, '}');
        }
        p++;
    }
    assert_int_equal(*p, ' ');
    char *end;
    errno = 0;
    strtod(p + 1, &end);
    assert_true(end > p + 1 && *end == '\0' && errno == 0);
    r->samples++;
}

/* Every line of text read; label_fn sees each label. */
static void parse(const char *text, size_t len, struct parsed *r,
                  void (*label_fn)(const char *, const char *, void *), void *arg)
{
    memset(r, 0, sizeof(*r));
    assert_int_equal(strlen(text), len);
    assert_true(len > 0 && text[len - 1] == '\n');
    /* Valid UTF-8 with no control but the newlines. */
    for (size_t i = 0; i < len;) {
        bool acting;
        size_t n = utf8_unit((const unsigned char *)text + i, len - i, &acting);
        assert_true(!acting || text[i] == '\n');
        i += n;
    }
    char *copy = strdup(text);
    for (char *line = copy, *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
        *nl = '\0';
        assert_true(line[0] != '\0');
        if (line[0] == '#')
            parse_comment(r, line);
        else
            parse_sample(r, line, label_fn, arg);
    }
    free(copy);
    for (size_t i = 0; i < r->fam_count; i++)
        assert_true(r->fam[i].help && r->fam[i].type[0]);
}

/* ------------------------------------------------------------------ */

static const char *const level_names[] = {"warned", "throttled", "re\"stricted"};

static struct metrics_view view(const struct metrics *m, const struct metrics_user *users,
                                size_t count)
{
    struct metrics_view v = {
        .version = "0.1.0", .mode = "enforce", .enforcing = true, .counters = m,
        .level_names = level_names, .level_count = 3, .users = users, .user_count = count,
        .users_tracked = 12, .users_omitted = 1, .processes_tracked = 345,
        .connector_up = true, .connector_events = 1000, .connector_overruns = 2,
        .taskstats_up = false, .events_suppressed = 7, .events_lost = 8,
    };
    return v;
}

static bool has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
        if ((p == text || p[-1] == '\n') && p[n] == '\n')
            return true;
    return false;
}

struct names_seen {
    const char *want[8];
    bool seen[8];
    size_t count;
};

static void note_user(const char *name, const char *value, void *arg)
{
    struct names_seen *s = arg;
    if (strcmp(name, "user") != 0)
        return;
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->want[i], value) == 0)
            s->seen[i] = true;
}

static void test_hostile_user_names_stay_label_values(void **state)
{
    (void)state;
    struct metrics m = {0};
    /* Names that try to end the label, the sample or the line, and add a
     * sample of their own; one that would clear an admin's terminal. */
    static const struct metrics_user users[] = {
        {.uid = 1001, .name = "evil\"} 9\nloginguard_user_level{user=\"root\",uid=\"0\"} 9",
         .cpu_cores = 2.5, .memory_bytes = 1 << 20, .tasks = 3, .level = 2},
        {.uid = 1002, .name = "back\\slash\\", .cpu_cores = 0.25, .level = 0, .exempt = true},
        {.uid = 1003, .name = "\x1b]0;owned\x07\xe2\x80\xae\xff", .level = 1},
        {.uid = 1004, .name = ""},
    };
    struct metrics_view v = view(&m, users, 4);
    size_t len;
    char *text = metrics_format(&v, &len);
    struct names_seen s = {.want = {users[0].name, users[1].name,
                                    "\\x1b]0;owned\\x07\\xe2\\x80\\xae\\xff", ""},
                           .count = 4};
    struct parsed r;
    parse(text, len, &r, note_user, &s);
    for (size_t i = 0; i < s.count; i++)
        assert_true(s.seen[i]);
    /* One loginguard_user_level sample a user, none for uid 0. */
    size_t levels = 0;
    for (const char *p = text; (p = strstr(p, "\nloginguard_user_level{")) != NULL; p++)
        levels++;
    assert_int_equal(levels, 4);
    assert_null(strstr(text, "uid=\"0\"} 9"));
    assert_true(has_line(text, "loginguard_user_level{user=\"evil\\\"} 9\\nloginguard_user_level"
                               "{user=\\\"root\\\",uid=\\\"0\\\"} 9\",uid=\"1001\"} 2"));
    assert_true(has_line(text, "loginguard_user_cpu_cores{user=\"back\\\\slash\\\\\",uid=\"1002\"}"
                               " 0.25"));
    assert_true(has_line(text, "loginguard_user_exempt{user=\"back\\\\slash\\\\\",uid=\"1002\"} 1"));
    assert_true(has_line(text, "loginguard_user_memory_bytes{user=\"\",uid=\"1004\"} 0"));
    assert_true(has_line(text, "loginguard_level_info{level=\"3\",name=\"re\\\"stricted\"} 1"));
    free(text);
}

static void test_counts_appear_with_their_labels(void **state)
{
    (void)state;
    struct metrics m = {.start_time = 1764043805123456ULL};
    metrics_count_action(&m, ACTION_STOP_SIGNALLED);
    metrics_count_action(&m, ACTION_STOP_SIGNALLED);
    metrics_count_action(&m, ACTION_LIMITS_LEVEL_DONE);
    metrics_count_notice(&m, NOTICE_THROTTLED, "tty", "skipped");
    metrics_count_notice(&m, NOTICE_THROTTLED, "all", "rate_limited");
    metrics_count_notice(&m, NOTICE_THROTTLED, "all", "rate_limited");
    metrics_count_notice(&m, NOTICE_THROTTLED, "pager", "sent");   /* no such channel */
    metrics_count_notice(&m, NOTICE_THROTTLED, "tty", "exploded"); /* no such outcome */
    struct metrics_view v = view(&m, NULL, 0);
    size_t len;
    char *text = metrics_format(&v, &len);
    struct parsed r;
    parse(text, len, &r, NULL, NULL);
    assert_true(has_line(text, "loginguard_actions_total{action=\"stop\",outcome=\"signalled\"} 2"));
    assert_true(has_line(text, "loginguard_actions_total{action=\"limits_level\",outcome=\"done\"}"
                               " 1"));
    /* Every action shown from the start, at 0. */
    assert_true(has_line(text, "loginguard_actions_total{action=\"move\",outcome=\"failed\"} 0"));
    assert_true(has_line(text, "loginguard_notices_total{kind=\"throttled\",channel=\"tty\","
                               "outcome=\"skipped\"} 1"));
    assert_true(has_line(text, "loginguard_notices_total{kind=\"throttled\",channel=\"all\","
                               "outcome=\"rate_limited\"} 2"));
    assert_true(has_line(text, "loginguard_notices_total{kind=\"warned\",channel=\"email\","
                               "outcome=\"sent\"} 0"));
    assert_null(strstr(text, "channel=\"all\",outcome=\"sent\""));
    assert_null(strstr(text, "pager"));
    assert_true(has_line(text, "loginguard_start_time_seconds 1764043805.123"));
    assert_true(has_line(text, "loginguard_build_info{version=\"0.1.0\"} 1"));
    assert_true(has_line(text, "loginguard_mode{mode=\"enforce\"} 1"));
    assert_true(has_line(text, "loginguard_mode{mode=\"observe\"} 0"));
    assert_true(has_line(text, "loginguard_proc_connector_overruns_total 2"));
    assert_true(has_line(text, "loginguard_taskstats_up 0"));
    assert_true(has_line(text, "loginguard_events_suppressed_total 7"));
    assert_true(has_line(text, "loginguard_events_lost_total 8"));
    assert_true(has_line(text, "loginguard_users_tracked 12"));
    assert_true(has_line(text, "loginguard_processes_tracked 345"));
    /* A family with no user yet is still described. */
    assert_non_null(strstr(text, "# TYPE loginguard_user_level gauge\n"));
    free(text);
}

static void test_sample_durations_make_a_histogram(void **state)
{
    (void)state;
    struct metrics m = {0};
    metrics_count_sample(&m, 800);       /* 0.8 ms */
    metrics_count_sample(&m, 3000);      /* 3 ms */
    metrics_count_sample(&m, 3000);
    metrics_count_sample(&m, 9000000);   /* 9 s: past every bound */
    struct metrics_view v = view(&m, NULL, 0);
    size_t len;
    char *text = metrics_format(&v, &len);
    struct parsed r;
    parse(text, len, &r, NULL, NULL);
    assert_true(has_line(text, "loginguard_sample_duration_seconds_bucket{le=\"0.001\"} 1"));
    assert_true(has_line(text, "loginguard_sample_duration_seconds_bucket{le=\"0.0025\"} 1"));
    assert_true(has_line(text, "loginguard_sample_duration_seconds_bucket{le=\"0.005\"} 3"));
    assert_true(has_line(text, "loginguard_sample_duration_seconds_bucket{le=\"5\"} 3"));
    assert_true(has_line(text, "loginguard_sample_duration_seconds_bucket{le=\"+Inf\"} 4"));
    assert_true(has_line(text, "loginguard_sample_duration_seconds_count 4"));
    assert_true(has_line(text, "loginguard_sample_duration_seconds_sum 9.0068"));
    assert_true(has_line(text, "loginguard_last_sample_duration_seconds 9"));
    free(text);
}

/* ------------------------------------------------------------------ */

static void test_a_published_file_is_replaced_whole_and_readable(void **state)
{
    (void)state;
    make_test_dir();
    int dirfd = open(test_dir, O_RDONLY | O_DIRECTORY);
    char err[512];
    mode_t old = umask(077);
    assert_int_equal(safe_publish_file(dirfd, test_dir, "lg.prom", "a 1\n", 4, err, sizeof(err)),
                     0);
    struct stat first, second;
    char path[256];
    snprintf(path, sizeof(path), "%s/lg.prom", test_dir);
    assert_int_equal(stat(path, &first), 0);
    assert_int_equal(first.st_mode & 07777, 0644); /* node_exporter reads it, whatever the umask */
    assert_int_equal(safe_publish_file(dirfd, test_dir, "lg.prom", "b 2\n", 4, err, sizeof(err)),
                     0);
    assert_int_equal(stat(path, &second), 0);
    assert_true(first.st_ino != second.st_ino); /* a new file renamed over, not rewritten */
    char buf[16] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(fgets(buf, sizeof(buf), f));
    fclose(f);
    assert_string_equal(buf, "b 2\n");
    umask(old);
    close(dirfd);
    remove_test_dir();
}

static void test_links_at_the_paths_are_never_followed(void **state)
{
    (void)state;
    make_test_dir();
    int dirfd = open(test_dir, O_RDONLY | O_DIRECTORY);
    char err[512], victim[256], path[256];
    write_file("victim", "keep\n");
    snprintf(victim, sizeof(victim), "%s/victim", test_dir);
    /* A link in the temporary file's place is removed, not written through. */
    snprintf(path, sizeof(path), "%s/lg.prom.tmp", test_dir);
    assert_int_equal(symlink(victim, path), 0);
    assert_int_equal(safe_publish_file(dirfd, test_dir, "lg.prom", "a 1\n", 4, err, sizeof(err)),
                     0);
    /* A link in the file's own place is replaced by the file. */
    snprintf(path, sizeof(path), "%s/lg2.prom", test_dir);
    assert_int_equal(symlink(victim, path), 0);
    assert_int_equal(safe_publish_file(dirfd, test_dir, "lg2.prom", "a 1\n", 4, err, sizeof(err)),
                     0);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    FILE *f = fopen(victim, "r");
    char buf[16] = "";
    assert_non_null(fgets(buf, sizeof(buf), f));
    fclose(f);
    assert_string_equal(buf, "keep\n");
    /* A directory in its place: an error that names the file. */
    char sub[256];
    snprintf(sub, sizeof(sub), "%s/dir.prom", test_dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    write_file("dir.prom/x", "x");
    assert_int_equal(safe_publish_file(dirfd, test_dir, "dir.prom", "a 1\n", 4, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "dir.prom"));
    close(dirfd);
    remove_test_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_values_are_escaped_as_the_format_says),
        cmocka_unit_test(test_what_could_act_becomes_text),
        cmocka_unit_test(test_hostile_user_names_stay_label_values),
        cmocka_unit_test(test_counts_appear_with_their_labels),
        cmocka_unit_test(test_sample_durations_make_a_histogram),
        cmocka_unit_test(test_a_published_file_is_replaced_whole_and_readable),
        cmocka_unit_test(test_links_at_the_paths_are_never_followed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
