#include "config.h"

#include <math.h>

#include "shellquote.h"
#include "shutil.h"
#include "suggest.h"
#include "testutil.h"
#include "util.h"

#define PRINT_ARGS "for a; do printf '%%s\\0' \"$a\"; done"
#define ARGV(s) s, sizeof(s) - 1

/* The argv a NUL-separated cmdline stands for, each word NUL-terminated:
 * what PRINT_ARGS prints when the shell got the words right. */
static size_t expected_output(const char *cmdline, size_t len, char *out)
{
    memcpy(out, cmdline, len);
    if (len > 0 && cmdline[len - 1] != '\0')
        out[len++] = '\0';
    return len;
}

static void assert_same_bytes(const struct sh_result *r, const char *cmdline, size_t len)
{
    char *want = xmalloc(len + 1);
    size_t n = expected_output(cmdline, len, want);
    assert_int_equal(r->status, 0);
    assert_int_equal(r->len, n);
    assert_memory_equal(r->out, want, n);
    free(want);
}

/* set -- <quoted>, then print the words: the round trip through a shell. */
static void assert_round_trip_in(const char *shell, const char *cmdline, size_t len)
{
    bool elided = true;
    char *q = shell_quote_argv(cmdline, len, 0, &elided);
    assert_false(elided);
    assert_true(terminal_safe(q));
    char *script = xasprintf("set -- %s\n" PRINT_ARGS, q);
    struct sh_result r = run_shell(shell, script);
    assert_same_bytes(&r, cmdline, len);
    free(r.out);
    free(script);
    free(q);
}

static void assert_round_trip(const char *cmdline, size_t len)
{
    assert_round_trip_in("/bin/sh", cmdline, len);
    if (access("/bin/bash", X_OK) == 0)
        assert_round_trip_in("/bin/bash", cmdline, len);
}

static void test_plain_words_stay_plain(void **state)
{
    (void)state;
    char *q = shell_quote_argv(ARGV("python3\0train.py\0--lr\0" "0.1\0-o\0/scratch/a_b,c:d@e+f\0"),
                               0, NULL);
    assert_string_equal(q, "python3 train.py --lr 0.1 -o /scratch/a_b,c:d@e+f");
    free(q);
    q = shell_quote_word(ARGV("it's"));
    assert_string_equal(q, "\"it's\"");
    free(q);
    q = shell_quote_word(ARGV("hello world"));
    assert_string_equal(q, "'hello world'");
    free(q);
    q = shell_quote_word(ARGV(""));
    assert_string_equal(q, "''");
    free(q);
}

static void test_round_trip_shell_syntax(void **state)
{
    (void)state;
    assert_round_trip(ARGV("echo\0hello world\0  two  spaces \0"));
    assert_round_trip(ARGV("a\0it's\0'\0''\0say \"hi\"\0\"\0"));
    assert_round_trip(ARGV("a\0$(id)\0`id`\0$HOME\0${x:-y}\0$\0"));
    assert_round_trip(ARGV("a\0back\\slash\0\\\0\\n\0\\'\0"));
    assert_round_trip(ARGV("a\0*\0*.c\0?\0[abc]\0{a,b}\0~\0~root\0#not a comment\0"));
    assert_round_trip(ARGV("a\0-rf\0--\0-\0a=b\0%1\0!\0!!\0^x^y\0don't!\0;\0&&\0|\0>x\0<x\0(\0)\0"));
}

static void test_round_trip_control_bytes(void **state)
{
    (void)state;
    assert_round_trip(ARGV("a\0line one\nline two\0trailing\n\0\n\0\n\n\0"));
    assert_round_trip(ARGV("a\0tab\there\0\x1b[2J\0\x01\x7f\0it's\x1b\n\0"));
    assert_round_trip(ARGV("a\0\xff\xfe\0r\xc3\xa9sum\xc3\xa9\0\xc3\0\x9b\x30m\0\xe2\x80\xae\0"));
    assert_round_trip(ARGV("a\0\0empty before\0\0"));
    /* /proc/PID/cmdline may lack the final NUL (a rewritten title). */
    assert_round_trip(ARGV("prog\0last word"));
    /* Every byte there can be in an argument. */
    char all[512];
    size_t n = 0;
    memcpy(all, "prog", 5);
    n = 5;
    for (int c = 1; c < 256; c++)
        all[n++] = (char)c;
    all[n++] = '\0';
    assert_round_trip(all, n);
}

static void test_reserved_first_word_is_a_command(void **state)
{
    (void)state;
    /* Quoted, "if" is a command that does not exist (127), not syntax (2). */
    char *q = shell_quote_argv(ARGV("if\0x\0"), 0, NULL);
    struct sh_result r = run_shell("/bin/sh", q);
    assert_int_equal(r.status, 127);
    free(r.out);
    free(q);
}

static void test_elision(void **state)
{
    (void)state;
    char cmdline[20000];
    size_t len = 0;
    for (int i = 0; i < 1000; i++)
        len += (size_t)sprintf(cmdline + len, "word%d", i) + 1;
    bool elided = false;
    char *q = shell_quote_argv(cmdline, len, 200, &elided);
    assert_true(elided);
    assert_true(strlen(q) <= 200);
    assert_true(strncmp(q, "word0 word1 word2 ", 18) == 0);
    unsigned kept = 0, more = 0;
    for (const char *p = q; (p = strstr(p, "word")); p++)
        kept++;
    assert_non_null(strstr(q, " <"));
    assert_int_equal(sscanf(strstr(q, " <"), " <%u more arguments not shown>", &more), 1);
    assert_int_equal(kept + more, 1000);
    assert_string_equal(q + strlen(q) - strlen("more arguments not shown>"),
                        "more arguments not shown>");
    /* Pasted, an elided line does not run a shorter command: sh refuses it. */
    char *script = xasprintf("set -- %s\n" PRINT_ARGS, q);
    struct sh_result r = run_shell("/bin/sh", script);
    assert_int_not_equal(r.status, 0);
    assert_int_equal(r.len, 0);
    free(r.out);
    free(script);
    free(q);

    q = shell_quote_argv(ARGV("prog\0a\0b\0"), 5, &elided);
    assert_true(elided);
    assert_string_equal(q, "<3 more arguments not shown>");
    free(q);
    q = shell_quote_argv(ARGV("prog\0a\0bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\0"), 40, &elided);
    assert_true(elided);
    assert_string_equal(q, "prog a <1 more argument not shown>");
    free(q);
    q = shell_quote_argv(ARGV("prog\0a\0"), 6, &elided);
    assert_false(elided);
    assert_string_equal(q, "prog a");
    free(q);
}

static void test_suggested_numbers(void **state)
{
    (void)state;
    assert_int_equal(suggest_cores(0), 1);
    assert_int_equal(suggest_cores(0.3), 1);
    assert_int_equal(suggest_cores(NAN), 1);
    assert_int_equal(suggest_cores(-2), 1);
    assert_int_equal(suggest_cores(2.03), 2);
    assert_int_equal(suggest_cores(2.5), 3);
    assert_int_equal(suggest_cores(3.95), 4);

    const uint64_t M = UINT64_C(1) << 20, G = UINT64_C(1) << 30;
    const struct { uint64_t in; const char *out; } mem[] = {
        {0, "1G"}, {600 * M, "1G"}, {700 * M, "2G"}, {4 * G, "6G"}, {4 * G + 2, "7G"},
    };
    for (size_t i = 0; i < sizeof(mem) / sizeof(mem[0]); i++) {
        char *s = suggest_memory(mem[i].in);
        assert_string_equal(s, mem[i].out);
        free(s);
    }
    const uint64_t MIN = 60 * UINT64_C(1000000), H = 60 * MIN;
    const struct { uint64_t in; const char *out; } tm[] = {
        {0, "01:00:00"}, {10 * MIN, "01:00:00"}, {45 * MIN, "02:00:00"}, {11 * H, "22:00:00"},
        {12 * H, "1-00:00:00"}, {13 * H + 1, "1-03:00:00"}, {30 * 24 * H, "7-00:00:00"},
    };
    for (size_t i = 0; i < sizeof(tm) / sizeof(tm[0]); i++) {
        char *s = suggest_time(tm[i].in);
        assert_string_equal(s, tm[i].out);
        free(s);
    }
}

static const uint64_t GIB = UINT64_C(1) << 30, HOUR = UINT64_C(3600000000);

static void test_suggested_lines(void **state)
{
    (void)state;
    struct suggest_input in = {ARGV("python3\0train.py\0--epochs\0" "10\0"), .cores = 3.9,
                               .memory = 4 * GIB, .runtime_usec = HOUR / 2,
                               .batch_partition = "batch", .interactive_partition = "interactive"};
    char *s = suggest_sbatch(&in);
    assert_string_equal(s, "sbatch -p batch -c 4 --mem=6G -t 01:00:00 "
                           "--wrap 'python3 train.py --epochs 10'");
    free(s);
    s = suggest_salloc(&in);
    assert_string_equal(s, "srun -p interactive -c 4 --mem=6G -t 01:00:00 --pty "
                           "python3 train.py --epochs 10");
    free(s);

    in.batch_partition = "";
    in.interactive_partition = "gpu nodes";
    in.cmdline_len = 0;
    s = suggest_sbatch(&in);
    assert_string_equal(s, "sbatch -c 4 --mem=6G -t 01:00:00");
    free(s);
    s = suggest_salloc(&in);
    assert_string_equal(s, "srun -p 'gpu nodes' -c 4 --mem=6G -t 01:00:00 --pty $SHELL");
    free(s);
}

/* A partition's limits: the line asks for no more than it allows (Slurm
 * 22.05's sbatch --test-only accepts a --time over MaxTime, and the job
 * then never starts). */
static void test_suggested_lines_keep_within_the_partition(void **state)
{
    (void)state;
    struct suggest_input in = {ARGV("sim\0--steps\0" "9\0"), .cores = 3.9, .memory = 4 * GIB,
                               .runtime_usec = 10 * HOUR, .batch_partition = "batch",
                               .max_time = 8 * 3600, .max_cpus = 2,
                               .max_memory = (uint64_t)1000 << 20};
    char *s = suggest_sbatch(&in);
    assert_string_equal(s, "sbatch -p batch -c 2 --mem=1000M -t 08:00:00 --wrap 'sim --steps 9'");
    free(s);
    char **argv = suggest_sbatch_test_argv(&in);
    const char *want[] = {"sbatch", "--test-only", "-p", "batch", "-c2", "--mem=1000M",
                          "-t08:00:00", "--wrap", "sim --steps 9", NULL};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        if (want[i])
            assert_string_equal(argv[i], want[i]);
        else
            assert_null(argv[i]);
    }
    suggest_argv_free(argv);
    /* Within the limits, the limits change nothing; two days is D-HH:MM:SS. */
    in.max_time = 3 * 86400;
    in.runtime_usec = 24 * HOUR;
    in.max_cpus = 8;
    s = suggest_sbatch(&in);
    assert_string_equal(s, "sbatch -p batch -c 4 --mem=1000M -t 2-00:00:00 --wrap 'sim --steps 9'");
    free(s);
    /* The program's directory, whatever its name holds: the job runs
     * there, wherever the line is pasted. */
    in.cwd = "/home/al/run 1/it's $(x)";
    s = suggest_sbatch(&in);
    assert_non_null(strstr(s, " -t 2-00:00:00 -D '/home/al/run 1/it'\\''s $(x)' --wrap "));
    free(s);
    argv = suggest_sbatch_test_argv(&in);
    assert_string_equal(argv[7], "-D");
    assert_string_equal(argv[8], in.cwd);
    assert_string_equal(argv[9], "--wrap");
    suggest_argv_free(argv);
    s = suggest_salloc(&in);
    assert_non_null(strstr(s, " -D '/home/al/run 1/it'\\''s $(x)' --pty sim --steps 9"));
    free(s);
    in.cmdline_len = 0;
    assert_null(suggest_sbatch_test_argv(&in));
}

/* What sbatch would run: the user's shell takes the line apart, sbatch
 * hands the --wrap value to /bin/sh.  Here the program is replaced by a
 * function that prints its words, argv[0] included. */
static void assert_sbatch_runs(const char *cmdline, size_t len)
{
    struct suggest_input in = {cmdline, len, .cores = 2, .memory = GIB, .runtime_usec = HOUR,
                               .batch_partition = "batch", .interactive_partition = "interactive"};
    char *line = suggest_sbatch(&in);
    assert_true(terminal_safe(line));
    char *script = xasprintf("set -- %s\nwhile [ $# -gt 0 ]; do\n"
                             "  if [ \"$1\" = --wrap ]; then printf '%%s' \"$2\"; fi; shift\n"
                             "done",
                             line);
    struct sh_result wrap = run_shell("/bin/sh", script);
    assert_int_equal(wrap.status, 0);
    assert_int_equal(strlen(wrap.out), wrap.len);
    char *job = xasprintf("p() { " PRINT_ARGS "; }\np %s\n", wrap.out);
    struct sh_result r = run_shell("/bin/sh", job);
    assert_same_bytes(&r, cmdline, len);

    free(r.out);
    free(job);
    free(wrap.out);
    free(script);
    free(line);
}

static void assert_srun_runs(const char *cmdline, size_t len)
{
    struct suggest_input in = {cmdline, len, .cores = 2, .memory = GIB, .runtime_usec = HOUR,
                               .batch_partition = "batch", .interactive_partition = "interactive"};
    char *line = suggest_salloc(&in);
    assert_true(terminal_safe(line));
    char *script = xasprintf("set -- %s\nwhile [ \"$1\" != --pty ]; do shift; done; shift\n"
                             PRINT_ARGS, line);
    struct sh_result r = run_shell("/bin/sh", script);
    assert_same_bytes(&r, cmdline, len);
    free(r.out);
    free(script);
    free(line);
}

static void test_sbatch_wrap_reproduces_argv(void **state)
{
    (void)state;
    static const struct { const char *s; size_t len; } cases[] = {
        {ARGV("./sim\0--in\0my input.dat\0")},
        {ARGV("python3\0-c\0import os; print(\"it's\", os.getcwd())\0")},
        {ARGV("sh\0-c\0echo $(hostname) `id -u` $HOME; exit 3\0")},
        {ARGV("prog\0line one\nline two\n\0\x1b[2J\0\xff\xfe\0\0!x\0*\0~\0#\0")},
        {ARGV("if\0then\0")},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_sbatch_runs(cases[i].s, cases[i].len);
        assert_srun_runs(cases[i].s, cases[i].len);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_words_stay_plain),
        cmocka_unit_test(test_round_trip_shell_syntax),
        cmocka_unit_test(test_round_trip_control_bytes),
        cmocka_unit_test(test_reserved_first_word_is_a_command),
        cmocka_unit_test(test_elision),
        cmocka_unit_test(test_suggested_numbers),
        cmocka_unit_test(test_suggested_lines),
        cmocka_unit_test(test_suggested_lines_keep_within_the_partition),
        cmocka_unit_test(test_sbatch_wrap_reproduces_argv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
