/* bench_rules: what classifying one command line costs against the
 * shipped rules (rules/rules.d), for an ordinary command line and for
 * ones crafted against the rules' argv patterns (long runs of near
 * matches), of 4 KiB (what the daemon hands the rules: snapshot.h's
 * ARGV_KEEP) and 32 KiB.  Beside each, what glibc's regexec (POSIX ERE,
 * what the rules used before RE2) costs on the same text for the same
 * patterns.  CPU time of this process (CLOCK_PROCESS_CPUTIME_ID), the
 * minimum and median of RUNS runs, and the machine's other load beside
 * them.  Figures, never pass/fail; needs no root.
 *
 * Environment: LG_TOP_SRCDIR (default the configured tree), LG_BENCH_RUNS
 * (default 9). */
#include "config.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"
#include "errors.h"
#include "rules.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

static char *repeated(const char *prefix, const char *unit, size_t len)
{
    char *s = malloc(len + 1);
    size_t p = strlen(prefix), u = strlen(unit), at = p;
    memcpy(s, prefix, p);
    while (at + u <= len) {
        memcpy(s + at, unit, u);
        at += u;
    }
    s[at] = '\0';
    return s;
}

struct input {
    const char *name, *comm, *prefix, *unit;
};

static const struct input inputs[] = {
    {"ordinary", "python3", "python3 /home/u/analysis/plot_results.py --in ", "data.csv "},
    {"_train runs", "python3", "python3 ", "_train"},
    {"gatk-package runs", "java", "java -jar ", "gatk-package"},
    {"pool host runs", "x", "x -o ", "supportxmr."},
    {"wallet near misses", "x", "x", " 4A1111111111"},
};

/* min (and *median) of runs classifications of a command line of len
 * bytes, or with glibc, of regexec with each argv pattern of the set. */
static double measure(const struct rule_set *set, const struct input *in, size_t len, bool glibc,
                      int runs, double *median)
{
    char *text = repeated(in->prefix, in->unit, len);
    double *t = malloc((size_t)runs * sizeof(*t));
    regex_t *compiled = NULL;
    size_t n = 0;
    if (glibc) {
        compiled = calloc(set->count, sizeof(*compiled));
        for (size_t i = 0; i < set->count; i++)
            if (set->rules[i].argv_text &&
                regcomp(&compiled[n], set->rules[i].argv_text, REG_EXTENDED | REG_NOSUB) == 0)
                n++;
    }
    for (int r = 0; r < runs; r++) {
        double start = cpu_self_us();
        if (glibc) {
            for (size_t i = 0; i < n; i++)
                regexec(&compiled[i], text, 0, NULL, 0);
        } else {
            struct proc_identity id = {"/home/u/bin/x", in->comm, text};
            rules_classify(set, &id);
        }
        t[r] = cpu_self_us() - start;
    }
    qsort(t, (size_t)runs, sizeof(*t), cmp_double);
    double min = t[0];
    *median = t[runs / 2];
    for (size_t i = 0; i < n; i++)
        regfree(&compiled[i]);
    free(compiled);
    free(t);
    free(text);
    return min;
}

int main(void)
{
    const char *top = getenv("LG_TOP_SRCDIR");
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/rules/rules.d", top && *top ? top : TOP_SRCDIR);
    const char *r = getenv("LG_BENCH_RUNS");
    int runs = r && atoi(r) > 0 ? atoi(r) : 9;
    char *dirs[] = {dir};
    struct rule_set set = {0};
    struct errors errs = {0};
    if (rules_load_dirs(&set, dirs, 1, &errs) != 0) {
        fprintf(stderr, "bench_rules: %s\n", errs.count ? errs.messages[0] : "cannot load rules");
        return SKIP;
    }
    size_t with_argv = 0;
    for (size_t i = 0; i < set.count; i++)
        with_argv += set.rules[i].argv_text != NULL;
    struct load_mark m0 = load_mark_now(cpu_self_us());
    printf("bench_rules: classifying one command line against the %zu shipped rules (%zu with an "
           "argv pattern)\n",
           set.count, with_argv);
    printf("CPU time of this process, min / median of %d runs, microseconds\n\n", runs);
    printf("%-20s %8s %22s %26s\n", "command line", "bytes", "rules_classify (RE2)",
           "glibc regexec, argv only");
    static const size_t lengths[] = {4096, 32768};
    for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
        for (size_t k = 0; k < 2; k++) {
            double med_re2, med_glibc;
            double min_re2 = measure(&set, &inputs[i], lengths[k], false, runs, &med_re2);
            double min_glibc = measure(&set, &inputs[i], lengths[k], true, runs, &med_glibc);
            printf("%-20s %8zu %10.1f / %-10.1f %12.1f / %-12.1f\n", inputs[i].name, lengths[k],
                   min_re2, med_re2, min_glibc, med_glibc);
        }
    }
    char text[160];
    other_load_text(other_load_between(m0, load_mark_now(cpu_self_us())), text, sizeof(text));
    printf("\nother load meanwhile (this benchmark not counted): %s\n", text);
    rules_free(&set);
    errors_free(&errs);
    return 0;
}
