/* The usage trace: its lines both ways (hostile command lines byte for
 * byte, only what changed written), the daemon's writer (modes, no
 * symlinks, its bounds), the reader over a crash's cut line, and the
 * replay of loginguardctl simulate against the engine's own decisions. */
#include "config.h"

#include <dirent.h>
#include <sys/stat.h>

#include "record/trace.h"
#include "rules.h"
#include "simulate.h"
#include "strbuf.h"
#include "testutil.h"
#include "trace_codec.h"
#include "trace_files.h"
#include "units.h"
#include "util.h"

#define SEC USEC_PER_SEC
#define T0 (1700000000ULL * SEC)

static const char hostile_argv[] = "./run\0--name=\xff\xfe\x01\n\"x\"\0\xe2\x80\xae evil\0";
#define HOSTILE_LEN (sizeof(hostile_argv) - 1)

static void fill(struct snapshot *s, uint64_t now, double cpu)
{
    snapshot_clear(s);
    s->now = now;
    s->interval = 2 * SEC;
    s->memory_pressure = -1;
    struct user_sample *u = snapshot_add_user(s, 1500);
    copy_string(u->name, sizeof(u->name), "alice");
    u->cpu = cpu;
    u->memory = 3ULL << 30;
    u->tasks = 3;
    u->detailed = true;
    u = snapshot_add_user(s, 1600);
    copy_string(u->name, sizeof(u->name), "bob\n\x1b[31m");
    u->cpu = 0.01;
    u->memory = 100 << 20;
    struct proc_sample *p = snapshot_add_proc(s);
    p->pid = 4242;
    p->start_time = 777;
    p->uid = 1500;
    p->ppid = 1;
    copy_string(p->comm, sizeof(p->comm), "mi\x1bner");
    p->exe = xstrdup("/home/alice/\xff/miner");
    p->exe_trusted = true;
    p->argv = xmalloc(HOSTILE_LEN + 1);
    memcpy(p->argv, hostile_argv, HOSTILE_LEN + 1);
    p->argv_len = HOSTILE_LEN;
    p->argv_total = HOSTILE_LEN;
    copy_string(p->argv_sha256, sizeof(p->argv_sha256), "ab");
    p->cpu = cpu;
    p->rss = 1ULL << 30;
    /* A command line that is UTF-8, NULs and controls and all. */
    p = snapshot_add_proc(s);
    p->pid = 4243;
    p->start_time = 778;
    p->uid = 1500;
    copy_string(p->comm, sizeof(p->comm), "sh");
    p->argv = xmalloc(16);
    memcpy(p->argv, "sh\0-c\0\x01\n\xc3\xa9", 11);
    p->argv_len = p->argv_total = 10;
}

static int count_lines(const char *s, const char *type)
{
    int n = 0;
    char key[32];
    snprintf(key, sizeof(key), "{\"t\":\"%s\"", type);
    for (const char *p = s; (p = strstr(p, key)); p++)
        n++;
    return n;
}

/* Every line of text through the decoder; the last sample into snap. */
static int decode_all(struct trace_decoder *d, const char *text, struct snapshot *snap)
{
    int samples = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        assert_non_null(nl);
        if (trace_decode_line(d, p, (size_t)(nl - p), snap) == 1)
            samples++;
        p = nl + 1;
    }
    return samples;
}

static void test_round_trip(void **state)
{
    (void)state;
    struct trace_encoder e = {0};
    struct strbuf out = {0};
    struct snapshot s = {0}, back = {0};
    trace_encode_start(&e, &out, "node1", T0, "observe", 2 * SEC);
    fill(&s, T0 + 2 * SEC, 3.25);
    trace_encode_sample(&e, &s, &out);
    /* Nothing is a line of its own but the lines. */
    assert_int_equal(count_lines(out.s, "trace") + count_lines(out.s, "user") +
                     count_lines(out.s, "proc") + count_lines(out.s, "sample"), 6);
    size_t newlines = 0;
    for (size_t i = 0; i < out.len; i++)
        newlines += out.s[i] == '\n';
    assert_int_equal(newlines, 6);

    struct trace_decoder d = {0};
    assert_int_equal(decode_all(&d, out.s, &back), 1);
    assert_string_equal(d.host, "node1");
    assert_int_equal(back.now, T0 + 2 * SEC);
    assert_int_equal(back.interval, 2 * SEC);
    assert_true(back.memory_pressure < 0);
    assert_int_equal(back.user_count, 2);
    const struct user_sample *a = snapshot_find_user(&back, 1500);
    assert_non_null(a);
    assert_string_equal(a->name, "alice");
    assert_true(a->cpu == 3.25);
    assert_int_equal(a->memory, 3ULL << 30);
    assert_true(a->detailed);
    assert_string_equal(snapshot_find_user(&back, 1600)->name, "bob\n\x1b[31m");
    assert_int_equal(back.proc_count, 2);
    const struct proc_sample *p = &back.procs[0];
    assert_int_equal(p->pid, 4242);
    assert_int_equal(p->start_time, 777);
    assert_string_equal(p->comm, "mi\x1bner");
    assert_string_equal(p->exe, "/home/alice/\xff/miner");
    assert_int_equal(p->argv_len, HOSTILE_LEN);
    assert_memory_equal(p->argv, hostile_argv, HOSTILE_LEN);
    assert_true(p->exe_trusted);
    assert_int_equal(back.procs[1].argv_len, 10);
    assert_memory_equal(back.procs[1].argv, "sh\0-c\0\x01\n\xc3\xa9", 10);
    assert_null(back.procs[1].exe);
    assert_int_equal(d.skipped, 0);

    /* The next sample, alice busier, bob the same: only alice is written,
     * and the process by its id alone. */
    size_t before = out.len;
    fill(&s, T0 + 4 * SEC, 3.5);
    snapshot_find_user(&s, 1600)->cpu = 0.01;
    trace_encode_sample(&e, &s, &out);
    const char *second = out.s + before;
    assert_int_equal(count_lines(second, "proc"), 0);
    assert_int_equal(count_lines(second, "user"), 0);
    assert_null(strstr(second, "[1600,"));
    assert_int_equal(decode_all(&d, second, &back), 1);
    assert_true(snapshot_find_user(&back, 1500)->cpu == 3.5);
    assert_true(snapshot_find_user(&back, 1600)->cpu == 0.01);
    assert_int_equal(back.proc_count, 2);

    /* bob leaves, the process execs another program (same pid and start). */
    before = out.len;
    fill(&s, T0 + 6 * SEC, 3.5);
    s.user_count = 1;
    free(s.procs[1].argv);
    s.proc_count = 1;
    free(s.procs[0].exe);
    s.procs[0].exe = xstrdup("/usr/bin/python3");
    trace_encode_sample(&e, &s, &out);
    second = out.s + before;
    assert_int_equal(count_lines(second, "proc"), 1);
    assert_non_null(strstr(second, "\"gone\":[1600]"));
    assert_non_null(strstr(second, "\"left\":[0,1]"));
    assert_int_equal(decode_all(&d, second, &back), 1);
    assert_int_equal(back.user_count, 1);
    assert_int_equal(back.proc_count, 1);
    assert_string_equal(back.procs[0].exe, "/usr/bin/python3");

    trace_decoder_free(&d);
    trace_snapshot_free(&back);
    trace_encoder_free(&e);
    snapshot_free(&s);
    strbuf_free(&out);
}

/* A command line not read in time is written as soon as it is. */
static void test_late_argv(void **state)
{
    (void)state;
    struct trace_encoder e = {0};
    struct strbuf out = {0};
    struct snapshot s = {0}, back = {0};
    struct trace_decoder d = {0};
    trace_encode_start(&e, &out, "n", T0, "observe", 2 * SEC);
    fill(&s, T0 + 2 * SEC, 3);
    free(s.procs[0].argv);
    s.procs[0].argv = NULL;
    s.procs[0].argv_len = 0;
    trace_encode_sample(&e, &s, &out);
    assert_false(trace_encoder_knows(&e, 4242, 777));
    assert_true(trace_encoder_knows(&e, 4243, 778)); /* no digest: nothing to wait for */
    assert_int_equal(decode_all(&d, out.s, &back), 1);
    assert_null(back.procs[0].argv);
    size_t before = out.len;
    fill(&s, T0 + 4 * SEC, 3);
    trace_encode_sample(&e, &s, &out);
    assert_true(trace_encoder_knows(&e, 4242, 777));
    assert_int_equal(count_lines(out.s + before, "proc"), 1);
    assert_int_equal(decode_all(&d, out.s + before, &back), 1);
    assert_int_equal(back.proc_count, 2);
    const struct proc_sample *p = back.procs[0].pid == 4242 ? &back.procs[0] : &back.procs[1];
    assert_int_equal(p->argv_len, HOSTILE_LEN);
    /* And no more after that. */
    before = out.len;
    fill(&s, T0 + 6 * SEC, 3);
    free(s.procs[0].argv);
    s.procs[0].argv = NULL;
    trace_encode_sample(&e, &s, &out);
    assert_int_equal(count_lines(out.s + before, "proc"), 0);
    trace_decoder_free(&d);
    trace_snapshot_free(&back);
    trace_encoder_free(&e);
    snapshot_free(&s);
    strbuf_free(&out);
}

static void test_decoder_refuses(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "not json",
        "{\"t\":\"sample\",\"now\":1,\"interval\":1,\"users\":[],\"gone\":[],\"procs\":[],\"left\":[]}",
        "{\"t\":\"trace\",\"version\":99,\"start\":1,\"sample_interval\":1}",
        "{\"t\":\"trace\",\"version\":1,\"start\":1,\"sample_interval\":1}",
        "{\"t\":\"sample\",\"now\":1,\"interval\":0,\"users\":[],\"gone\":[],\"procs\":[],\"left\":[]}",
        "{\"t\":\"sample\",\"now\":1,\"interval\":1,\"users\":[[1,-5,0,0,0]],\"gone\":[],\"procs\":[],\"left\":[]}",
        "{\"t\":\"sample\",\"now\":1,\"interval\":1,\"users\":[[1,1,0,0]],\"gone\":[],\"procs\":[],\"left\":[]}",
        "{\"t\":\"proc\",\"id\":5,\"pid\":1,\"start\":1,\"uid\":1,\"ppid\":0,\"session\":0,\"comm\":{\"hex\":\"zz\"}}",
        "{\"t\":\"proc\",\"id\":5,\"pid\":1,\"start\":1,\"uid\":1,\"ppid\":0,\"session\":0,\"comm\":\"01234567890123456789\"}",
        "{\"t\":\"proc\",\"id\":4,\"pid\":1,\"start\":1,\"uid\":1,\"ppid\":0,\"session\":0,\"comm\":\"x\"}",
        "{\"t\":\"sample\",\"now\":5,\"interval\":1,\"users\":[],\"gone\":[],\"procs\":[],\"left\":[]",
    };
    struct trace_decoder d = {0};
    struct snapshot snap = {0};
    int results[sizeof(bad) / sizeof(bad[0])];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        results[i] = trace_decode_line(&d, bad[i], strlen(bad[i]), &snap);
    /* Before a header a sample is nobody's; the fifth line is a header,
     * and the proc with id 5 (the comm too long aside) makes id 4 late. */
    assert_int_equal(results[0], -1);
    assert_int_equal(results[1], -1);
    assert_int_equal(results[2], -1);
    assert_int_equal(results[3], -1);
    assert_int_equal(results[4], 0);
    assert_int_equal(results[5], -1);
    assert_int_equal(results[6], -1);
    assert_int_equal(results[7], -1);
    assert_int_equal(results[8], -1);
    assert_int_equal(results[9], -1);
    assert_int_equal(results[10], 0); /* no id 5 was taken */
    assert_int_equal(results[11], -1);
    assert_int_equal(d.samples, 0);
    trace_decoder_free(&d);
    trace_snapshot_free(&snap);
}

static void count(struct trace_decoder *d, struct snapshot *snap, void *arg)
{
    (void)d;
    (void)snap;
    (*(int *)arg)++;
}

static struct policy test_policy(const char *dir)
{
    struct policy p;
    policy_init_defaults(&p);
    set_string(&p.state_dir, dir);
    p.trace_max_size = 1 << 20;
    return p;
}

static void test_writer_files(void **state)
{
    (void)state;
    const char *dir = make_test_dir();
    struct policy p = test_policy(dir);
    struct trace_writer t;
    trace_writer_init(&t);
    char err[700] = "";
    assert_int_equal(trace_writer_open(&t, &p, err, sizeof(err)), 0);
    struct snapshot s = {0};
    for (int i = 1; i <= 3; i++) {
        fill(&s, T0 + (uint64_t)i * 2 * SEC, 3.0 + i);
        assert_int_equal(trace_writer_sample(&t, &s, "node1", "observe", 2 * SEC, err,
                                             sizeof(err)), 0);
    }
    char path[256];
    snprintf(path, sizeof(path), "%s/trace", dir);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0700);
    snprintf(path, sizeof(path), "%s/trace/%s", dir, t.name);
    assert_int_equal(lstat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);

    /* A crash in the middle of the next sample's write. */
    FILE *f = fopen(path, "a");
    fputs("{\"t\":\"sample\",\"now\":17000000", f);
    fclose(f);
    trace_writer_close(&t);

    struct trace_read_stats rs;
    int n = 0;
    snprintf(path, sizeof(path), "%s/trace", dir);
    assert_int_equal(trace_read_dir(path, 0, 0, count, &n, &rs, err,
                                    sizeof(err)), 0);
    assert_int_equal(n, 3);
    assert_int_equal(rs.samples, 3);
    assert_int_equal(rs.cut, 1);
    assert_int_equal(rs.first, T0 + 2 * SEC);
    assert_int_equal(rs.last, T0 + 6 * SEC);
    /* The range: only the middle one. */
    n = 0;
    assert_int_equal(trace_read_dir(path, T0 + 3 * SEC, T0 + 5 * SEC, count,
                                    &n, &rs, err, sizeof(err)), 0);
    assert_int_equal(n, 1);

    snapshot_free(&s);
    policy_free(&p);
    remove_test_dir();
}

static void test_writer_refuses_symlink(void **state)
{
    (void)state;
    const char *dir = make_test_dir();
    char link[256], target[256];
    snprintf(target, sizeof(target), "%s/elsewhere", dir);
    snprintf(link, sizeof(link), "%s/trace", dir);
    assert_int_equal(mkdir(target, 0777), 0);
    assert_int_equal(symlink(target, link), 0);
    struct policy p = test_policy(dir);
    struct trace_writer t;
    trace_writer_init(&t);
    char err[700] = "";
    assert_int_equal(trace_writer_open(&t, &p, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "symbolic link"));
    struct snapshot s = {0};
    fill(&s, T0, 1);
    assert_int_equal(trace_writer_sample(&t, &s, "n", "observe", 2 * SEC, err, sizeof(err)), 0);
    DIR *dp = opendir(target);
    int entries = 0;
    for (struct dirent *de; (de = readdir(dp));)
        entries += de->d_name[0] != '.';
    closedir(dp);
    assert_int_equal(entries, 0);
    trace_writer_close(&t);
    snapshot_free(&s);
    policy_free(&p);
    remove_test_dir();
}

/* A user making four new processes every sample, each with a 4 KiB
 * command line that is not UTF-8: the trace stays within max_size (and a
 * segment's worth), the user's processes are written without their
 * command lines and then not at all once their budget is spent, and every
 * sample kept still replays with the users' totals. */
struct last_sample {
    uint64_t now;
    double alice_cpu;
};

static void remember(struct trace_decoder *d, struct snapshot *snap, void *arg)
{
    (void)d;
    struct last_sample *l = arg;
    l->now = snap->now;
    l->alice_cpu = snapshot_find_user(snap, 1500)->cpu;
}

static void test_writer_bounded(void **state)
{
    (void)state;
    const char *dir = make_test_dir();
    struct policy p = test_policy(dir);
    struct trace_writer t;
    trace_writer_init(&t);
    char err[700] = "";
    assert_int_equal(trace_writer_open(&t, &p, err, sizeof(err)), 0);
    struct snapshot s = {0};
    for (int i = 0; i < 3000; i++) {
        fill(&s, T0 + (uint64_t)i * 2 * SEC, 3);
        for (int k = 0; k < 4; k++) {
            struct proc_sample *ps = snapshot_add_proc(&s);
            ps->pid = 10000 + i * 4 + k;
            ps->start_time = (uint64_t)i;
            ps->uid = 1500;
            ps->argv = xmalloc(ARGV_KEEP);
            memset(ps->argv, '\xff', ARGV_KEEP);
            ps->argv_len = ps->argv_total = ARGV_KEEP;
        }
        assert_int_equal(trace_writer_sample(&t, &s, "n", "observe", 2 * SEC, err, sizeof(err)),
                         0);
    }
    trace_writer_close(&t);
    char path[256];
    snprintf(path, sizeof(path), "%s/trace", dir);
    DIR *dp = opendir(path);
    uint64_t total = 0;
    for (struct dirent *de; (de = readdir(dp));) {
        struct stat st;
        if (de->d_name[0] != '.' && fstatat(dirfd(dp), de->d_name, &st, 0) == 0)
            total += (uint64_t)st.st_size;
    }
    closedir(dp);
    print_message("trace of 3000 samples with 4 new 4 KiB command lines each: %llu bytes on "
                  "disk, %llu written (max_size 1 MiB)\n", (unsigned long long)total,
                  (unsigned long long)t.bytes_written);
    assert_true(total <= p.trace_max_size + (1 << 20) + 64 * 1024);
    /* Each command line in full would be 3000 * 4 * 8 KiB (hex). */
    assert_true(t.bytes_written < 3000ULL * 4 * 8192 / 20);
    struct last_sample last = {0};
    struct trace_read_stats rs;
    assert_int_equal(trace_read_dir(path, 0, 0, remember, &last, &rs, err, sizeof(err)), 0);
    assert_int_equal(rs.skipped, 0);
    assert_true(rs.samples > 100);
    assert_int_equal(last.now, T0 + 2999ULL * 2 * SEC);
    assert_true(last.alice_cpu == 3);
    snapshot_free(&s);
    policy_free(&p);
    remove_test_dir();
}

/* One user's 2,000 processes whose usage changes every sample: what
 * they write counts against that user's budget, so after four budgets
 * they leave the segment, and another user's process is still written
 * each sample. */
static void test_changes_count_against_the_budget(void **state)
{
    (void)state;
    struct trace_encoder e = {.user_budget = 16 * 1024};
    struct strbuf out = {0};
    trace_encode_start(&e, &out, "n", T0, "observe", 2 * SEC);
    struct snapshot s = {0};
    size_t last = 0;
    for (int i = 0; i < 200; i++) {
        snapshot_clear(&s);
        s.now = T0 + (uint64_t)i * 2 * SEC;
        s.interval = 2 * SEC;
        s.memory_pressure = -1;
        snapshot_add_user(&s, 1500)->detailed = true;
        snapshot_add_user(&s, 1600)->detailed = true;
        for (int k = 0; k <= 2000; k++) {
            struct proc_sample *ps = snapshot_add_proc(&s);
            ps->pid = 1000 + k;
            ps->start_time = 1;
            ps->uid = k == 2000 ? 1600 : 1500;
            copy_string(ps->comm, sizeof(ps->comm), "busy");
            ps->cpu = i % 2 ? 0.5 : 0.25;
            ps->rss = 1 << 20;
        }
        last = out.len;
        trace_encode_sample(&e, &s, &out);
    }
    print_message("200 samples of 2,001 processes changing each sample: %zu bytes (budget %llu)\n",
                  out.len, (unsigned long long)e.user_budget);
    /* Four budgets, one sample's overrun, and 200 samples of one process. */
    assert_true(out.len < 4 * e.user_budget + 2001 * 100 + 200 * 200);
    /* The last sample names only the other user's process. */
    const char *line = out.s + last;
    assert_true(out.len - last < 200);
    assert_non_null(strstr(line, "\"procs\":[["));
    strbuf_free(&out);
    trace_encoder_free(&e);
    snapshot_free(&s);
}

/* ------------------------------------------------------------------ */
/* The replay against the engine itself */

static void step(struct trace_decoder *d, struct snapshot *snap, void *arg)
{
    simulation_step(arg, d, snap);
}

static void test_simulate(void **state)
{
    (void)state;
    const char *dir = make_test_dir();
    struct policy cur = test_policy(dir), cand = test_policy(dir);
    cur.window = cand.window = 10 * SEC;
    cand.violation_cpu = 2 * cur.violation_cpu;
    /* The candidate forbids what the process's command line says. */
    char rule_path[256];
    snprintf(rule_path, sizeof(rule_path), "%s",
             write_file("r.rules", "{\"name\": \"no-evil\", \"class\": \"forbidden\", "
                                   "\"argv\": \"evil\"}\n"));
    struct errors errs = {0};
    assert_int_equal(rules_load_file(&cand.rules, rule_path, &errs), 0);
    struct trace_writer t;
    trace_writer_init(&t);
    char err[700] = "";
    assert_int_equal(trace_writer_open(&t, &cur, err, sizeof(err)), 0);
    /* Two minutes of alice at 3 cores: above 2, below 4. */
    struct snapshot s = {0};
    for (int i = 1; i <= 60; i++) {
        fill(&s, T0 + (uint64_t)i * 2 * SEC, 3);
        assert_int_equal(trace_writer_sample(&t, &s, "n", "observe", 2 * SEC, err, sizeof(err)),
                         0);
    }
    trace_writer_close(&t);

    struct simulation sim;
    simulation_init(&sim, &cur, &cand);
    struct trace_read_stats rs;
    char path[256];
    snprintf(path, sizeof(path), "%s/trace", dir);
    assert_int_equal(trace_read_dir(path, 0, 0, step, &sim, &rs, err, sizeof(err)), 0);
    assert_int_equal(sim.samples, 60);
    const struct sim_user *alice = NULL;
    for (size_t i = 0; i < sim.user_count; i++)
        if (sim.users[i].uid == 1500)
            alice = &sim.users[i];
    assert_non_null(alice);
    /* A window of 10 s over 120 s: the ladder's three rungs and more. */
    assert_true(alice->o[0].violations >= 3);
    assert_int_equal(alice->o[0].highest, 3);
    assert_int_equal(alice->o[1].violations, 0);
    assert_int_equal(alice->o[1].stopped, 1);
    assert_int_equal(alice->o[1].stops[0].pid, 4242);
    assert_string_equal(alice->o[1].stops[0].why, "no-evil");
    assert_true(alice->o[0].throttled > 0);
    assert_true(alice->o[0].notices > 0);
    simulation_free(&sim);
    snapshot_free(&s);
    errors_free(&errs);
    policy_free(&cur);
    policy_free(&cand);
    remove_test_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_late_argv),
        cmocka_unit_test(test_decoder_refuses),
        cmocka_unit_test(test_writer_files),
        cmocka_unit_test(test_writer_refuses_symlink),
        cmocka_unit_test(test_writer_bounded),
        cmocka_unit_test(test_changes_count_against_the_budget),
        cmocka_unit_test(test_simulate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
