/* The partitions as Slurm prints them: recorded output (tests/fixtures/
 * slurm), Slurm's time forms, and text that is not Slurm's. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy.h"
#include "slurm_advice.h"
#include "slurm_partitions.h"
#include "util.h"

#define MB (UINT64_C(1) << 20)

static char *fixture(const char *name, size_t *len)
{
    char *path = xasprintf("%s/tests/fixtures/slurm/%s", TOP_SRCDIR, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *text = xmalloc(SLURM_TEXT_MAX);
    *len = fread(text, 1, SLURM_TEXT_MAX, f);
    fclose(f);
    free(path);
    return text;
}

static int parse(const char *text, struct slurm_partitions *out, char *err)
{
    return slurm_partitions_parse(text, strlen(text), out, err, 200);
}

/* A partition as the tests expect it; a list as Slurm writes it ("ALL",
 * "a,b", or "" for none). */
struct expect {
    const char *name;
    bool up, is_default, hidden, root_only;
    const char *qos;
    uint64_t max_time, default_time;
    unsigned max_cpus_per_node;
    uint64_t max_mem_per_node;
    const char *allow_groups, *allow_accounts, *deny_accounts;
};

static void assert_names(const struct slurm_names *n, const char *want)
{
    char got[256] = "";
    if (n->all) {
        assert_int_equal(n->count, 0);
        strcpy(got, "ALL");
    }
    for (size_t i = 0; i < n->count; i++) {
        assert_true(n->names[i][0] != '\0');
        snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? "," : "", n->names[i]);
    }
    assert_string_equal(got, want);
}

/* Every field of each partition, in Slurm's order, and no more of them. */
static void assert_partitions(const struct slurm_partitions *ps, const struct expect *want,
                              size_t count)
{
    assert_int_equal(ps->count, count);
    for (size_t i = 0; i < count; i++) {
        const struct slurm_partition *p = &ps->items[i];
        const struct expect *w = &want[i];
        assert_string_equal(p->name, w->name);
        assert_ptr_equal(slurm_partition_find(ps, w->name), p);
        assert_int_equal(p->up, w->up);
        assert_int_equal(p->is_default, w->is_default);
        assert_int_equal(p->hidden, w->hidden);
        assert_int_equal(p->root_only, w->root_only);
        if (w->qos)
            assert_string_equal(p->qos, w->qos);
        else
            assert_null(p->qos);
        assert_int_equal(p->max_time, w->max_time);
        assert_int_equal(p->default_time, w->default_time);
        assert_int_equal(p->max_cpus_per_node, w->max_cpus_per_node);
        assert_int_equal(p->max_mem_per_node, w->max_mem_per_node);
        assert_names(&p->allow_groups, w->allow_groups);
        assert_names(&p->allow_accounts, w->allow_accounts);
        assert_names(&p->deny_accounts, w->deny_accounts);
    }
    assert_null(slurm_partition_find(ps, "nosuch"));
}

/* The recorded output of one Slurm (tests/fixtures/slurm/README.md). */
static void assert_fixture(const char *name, const struct expect *want, size_t count)
{
    size_t len;
    char *text = fixture(name, &len), err[200] = "";
    struct slurm_partitions ps;
    assert_int_equal(slurm_partitions_parse(text, len, &ps, err, sizeof(err)), 0);
    assert_string_equal(err, "");
    assert_partitions(&ps, want, count);
    slurm_partitions_free(&ps);
    free(text);
}

#define DAY (UINT64_C(86400))

static void test_slurm_22_05(void **state)
{
    (void)state;
    /* batch: the default; interactive: QoS normal; gpu-restricted: a
     * group's; old: down, an account denied (and no AllowAccounts=). */
    static const struct expect want[] = {
        {"batch", true, true, false, false, NULL, 2 * DAY, 3600, 2, 16000 * MB, "ALL", "ALL", ""},
        {"interactive", true, false, false, false, "normal", 8 * 3600, 30 * 60, 0, 0, "ALL",
         "ALL", ""},
        {"gpu-restricted", true, false, false, false, NULL, DAY, 0, 0, 0, "lgslurmgpu", "ALL",
         ""},
        {"old", false, false, false, false, NULL, 0, 0, 0, 0, "ALL", "ALL", "guests"},
    };
    assert_fixture("22.05/scontrol-show-partition-oneliner.txt", want, 4);
}

/* Later Slurms print words 22.05 did not (MaxCPUsPerSocket=, NodeSets=,
 * PowerDownOnIdle=, ExclusiveTopo=, TRESBillingWeights=): passed over. */
static void test_slurm_23_02_to_23_11(void **state)
{
    (void)state;
    /* Memory limited per CPU (DefMemPerCPU=), so none per node. */
    static const struct expect want[] = {
        {"a3mega", true, true, false, false, NULL, 0, 0, 0, 0, "ALL", "ALL", ""},
    };
    assert_fixture("23.02-23.11/scontrol-show-partition-oneliner.txt", want, 1);
}

static void test_slurm_24_05_to_24_11(void **state)
{
    (void)state;
    static const struct expect want[] = {
        {"public-gpu", true, false, false, false, NULL, 2 * DAY, 2 * 60, 0, 0, "ALL", "ALL", ""},
    };
    assert_fixture("24.05-24.11/scontrol-show-partition-oneliner.txt", want, 1);
}

/* Without --oneliner a partition's words go on over indented lines: not
 * read, and the error says where. */
static void test_slurm_22_05_without_oneliner(void **state)
{
    (void)state;
    size_t len;
    char *text = fixture("22.05/scontrol-show-partition.txt", &len), err[200] = "";
    struct slurm_partitions ps;
    assert_int_equal(slurm_partitions_parse(text, len, &ps, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "line 2: no PartitionName="));
    assert_int_equal(ps.count, 0);
    assert_null(ps.items);
    free(text);
}

static void test_time_forms(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint64_t seconds;
    } good[] = {
        {"UNLIMITED", 0}, {"INFINITE", 0}, {"NONE", 0}, {"30", 1800}, {"30:15", 1815},
        {"01:00:00", 3600}, {"2-00:00:00", 172800}, {"1-12", 129600}, {"1-12:30", 131400},
        {"0-00:00:05", 5}, {"365-00:00:00", 365 * 86400}, {"525600", 365 * 86400},
    };
    for (size_t k = 0; k < sizeof(good) / sizeof(good[0]); k++) {
        uint64_t t = 99;
        assert_int_equal(slurm_time_parse(good[k].text, &t), 0);
        assert_int_equal(t, good[k].seconds);
    }
    static const char *const bad[] = {"", "-", "1-", "a", "1:2:3:4", "1::2", "-5",
                                       "1234567890", "01:00:00x", " 5"};
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        uint64_t t;
        assert_int_equal(slurm_time_parse(bad[k], &t), -1);
    }
    /* A year is the most: 366 days, however written, is too long. */
    static const char *const too_long[] = {"9999-00:00:00", "365-24", "8784:00:00",
                                            "365-00:00:01"};
    for (size_t k = 0; k < sizeof(too_long) / sizeof(too_long[0]); k++) {
        uint64_t t;
        assert_int_equal(slurm_time_parse(too_long[k], &t), -2);
    }
    char out[32];
    slurm_time_format(3600, out, sizeof(out));
    assert_string_equal(out, "01:00:00");
    slurm_time_format(2 * 86400 + 3661, out, sizeof(out));
    assert_string_equal(out, "2-01:01:01");
    slurm_time_format(0, out, sizeof(out));
    assert_string_equal(out, "00:00:00");
    slurm_time_format(86400, out, sizeof(out));
    assert_string_equal(out, "1-00:00:00");
    /* Whatever is read, written back, reads again as itself (up to a year). */
    for (uint64_t t = 0; t <= 365 * 86400; t += 86399) {
        uint64_t back = 1;
        slurm_time_format(t, out, sizeof(out));
        assert_int_equal(slurm_time_parse(out, &back), 0);
        assert_int_equal(back, t);
    }
}

static void test_not_slurm_is_an_error_with_its_line(void **state)
{
    (void)state;
    struct slurm_partitions ps;
    char err[200];
    assert_int_equal(parse("PartitionName=a State=UP\nslurm_load_partitions: Unable to contact "
                           "slurm controller (connect failure)\n", &ps, err), -1);
    assert_non_null(strstr(err, "line 2"));
    assert_int_equal(ps.count, 0);
    assert_int_equal(parse("PartitionName=a MaxTime=soon\n", &ps, err), -1);
    assert_non_null(strstr(err, "MaxTime=soon"));
    /* Over a year is no limit, not an error: the other partitions stay. */
    assert_int_equal(parse("PartitionName=long MaxTime=400-00:00:00 DefaultTime=366-00:00:00\n"
                           "PartitionName=b MaxTime=01:00:00\n",
                           &ps, err),
                     0);
    assert_int_equal(ps.count, 2);
    assert_int_equal(ps.items[0].max_time, 0);
    assert_int_equal(ps.items[0].default_time, 0);
    assert_int_equal(ps.items[1].max_time, 3600);
    slurm_partitions_free(&ps);
    assert_int_equal(parse("State=UP\n", &ps, err), -1);
    assert_non_null(strstr(err, "no PartitionName"));
    assert_int_equal(slurm_partitions_parse("PartitionName=a\0x", 17, &ps, err, 200), -1);
    assert_non_null(strstr(err, "NUL"));
    /* Blank lines, CR LF, unknown keys and values holding '=' are fine. */
    assert_int_equal(parse("\nPartitionName=a TRES=cpu=2,mem=1M Future=YES\r\n\n", &ps, err), 0);
    assert_int_equal(ps.count, 1);
    assert_true(ps.items[0].allow_groups.all);
    slurm_partitions_free(&ps);
    /* A CR inside a line separates words: what follows it is read. */
    assert_int_equal(parse("PartitionName=a\rState=UP\n", &ps, err), 0);
    assert_string_equal(ps.items[0].name, "a");
    assert_true(ps.items[0].up);
    slurm_partitions_free(&ps);
}

static void test_bounds(void **state)
{
    (void)state;
    struct slurm_partitions ps;
    char err[200];
    /* More partitions than read: an error, not a partial list. */
    size_t n = SLURM_PARTITIONS_MAX + 1, len = 0;
    char *text = xmalloc(n * 32);
    for (size_t k = 0; k < n; k++)
        len += (size_t)sprintf(text + len, "PartitionName=p%zu\n", k);
    assert_int_equal(slurm_partitions_parse(text, len, &ps, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "more partitions"));
    free(text);
    /* As many groups as read, and one more. */
    for (size_t extra = 0; extra < 2; extra++) {
        text = xmalloc(64 + (SLURM_NAMES_MAX + extra) * 8);
        len = (size_t)sprintf(text, "PartitionName=a AllowGroups=");
        for (size_t k = 0; k < SLURM_NAMES_MAX + extra; k++)
            len += (size_t)sprintf(text + len, "g%zu,", k);
        assert_int_equal(slurm_partitions_parse(text, len, &ps, err, sizeof(err)),
                         extra ? -1 : 0);
        if (!extra)
            assert_int_equal(ps.items[0].allow_groups.count, SLURM_NAMES_MAX);
        slurm_partitions_free(&ps);
        free(text);
    }
    assert_int_equal(slurm_partitions_parse("x", SLURM_TEXT_MAX + 1, &ps, err, sizeof(err)), -1);
}

/* The lines' partitions: Slurm's default first, the interactive ones for
 * srun, never one that is down, hidden or root's; the admin's word wins. */
static void test_advice(void **state)
{
    (void)state;
    struct slurm_partitions ps;
    char err[200];
    assert_int_equal(parse("PartitionName=short State=UP MaxTime=01:00:00\n"
                           "PartitionName=main Default=YES State=UP MaxTime=2-00:00:00 "
                           "AllowGroups=phys,chem\n"
                           "PartitionName=down State=DOWN\n"
                           "PartitionName=hidden State=UP Hidden=YES\n"
                           "PartitionName=root State=UP RootOnly=YES\n"
                           "PartitionName=devel State=UP QoS=interactive\n"
                           "PartitionName=Interactive-gpu State=UP MaxCPUsPerNode=4\n",
                           &ps, err), 0);
    struct policy p;
    policy_init_defaults(&p);
    struct slurm_advice a;
    slurm_advice_make(&p, &ps, &a);
    assert_int_equal(a.batch_count, 2);
    assert_string_equal(a.batch[0].partition, "main");
    assert_int_equal(a.batch[0].max_time, 2 * 86400);
    assert_int_equal(a.batch[0].groups->count, 2);
    assert_string_equal(a.batch[1].partition, "short");
    assert_null(a.batch[1].groups);
    assert_int_equal(a.interactive_count, 2);
    assert_string_equal(a.interactive[0].partition, "devel");
    assert_string_equal(a.interactive[1].partition, "Interactive-gpu");
    assert_int_equal(a.interactive[1].max_cpus, 4);

    /* The admin's partitions, with Slurm's limits where it knows them. */
    p.batch_partition = xstrdup("short");
    p.interactive_partition = xstrdup("elsewhere");
    slurm_advice_make(&p, &ps, &a);
    assert_int_equal(a.batch_count, 1);
    assert_string_equal(a.batch[0].partition, "short");
    assert_int_equal(a.batch[0].max_time, 3600);
    assert_int_equal(a.interactive_count, 1);
    assert_string_equal(a.interactive[0].partition, "elsewhere");
    assert_int_equal(a.interactive[0].max_time, 0);
    policy_free(&p);

    /* No interactive partition: srun uses the batch ones.  No Slurm and
     * no config: -p is left out. */
    policy_init_defaults(&p);
    slurm_partitions_free(&ps);
    assert_int_equal(parse("PartitionName=only State=UP\n", &ps, err), 0);
    slurm_advice_make(&p, &ps, &a);
    assert_string_equal(a.interactive[0].partition, "only");
    slurm_advice_make(&p, NULL, &a);
    assert_int_equal(a.batch_count, 1);
    assert_string_equal(a.batch[0].partition, "");
    assert_string_equal(a.interactive[0].partition, "");
    slurm_partitions_free(&ps);
    policy_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_22_05),
        cmocka_unit_test(test_slurm_22_05_without_oneliner),
        cmocka_unit_test(test_slurm_23_02_to_23_11),
        cmocka_unit_test(test_slurm_24_05_to_24_11),
        cmocka_unit_test(test_time_forms),
        cmocka_unit_test(test_not_slurm_is_an_error_with_its_line),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_advice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
