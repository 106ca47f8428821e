/* loginguardctl why: the sentences for each reason the daemon acts or
 * does not, on facts made up here and on engine state the real engine
 * built from synthetic snapshots. */
#include "config.h"

#include "engine.h"
#include "slurm_job.h"
#include "testutil.h"
#include "units.h"
#include "util.h"
#include "why_explain.h"

#define SEC USEC_PER_SEC
#define T0 (1700000000ULL * SEC) /* 2023-11-14 22:13:20 UTC */

struct fixture {
    struct policy policy;
    struct engine_state state;
    struct snapshot snap;
    struct decisions out;
    struct rule rules[2];
    struct why_facts facts;
    struct why_answer answer;
};

static int setup(void **state)
{
    setenv("TZ", "UTC", 1);
    struct fixture *f = calloc(1, sizeof(*f));
    policy_init_defaults(&f->policy);
    f->policy.mode = MODE_ENFORCE;
    f->policy.min_uid = 1000;
    f->policy.window = 300 * SEC;
    f->policy.violation_cpu = 1.5;
    f->policy.violation_memory = 8ULL << 30;
    f->policy.compute_cpu = 1;
    f->policy.compute_grace = 60 * SEC;
    f->rules[0] = (struct rule){.name = "xmrig", .class = CLASS_FORBIDDEN,
                                .exe = "/usr/bin/xmrig", .cpu = -1, .grace = -1};
    f->rules[1] = (struct rule){.name = "lammps", .class = CLASS_COMPUTE, .comm = "lmp*",
                                .cpu = -1, .grace = -1};
    /* Borrowed for the test: policy_free must not free them. */
    f->policy.rules.rules = f->rules;
    f->policy.rules.count = 2;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    f->policy.rules.rules = NULL;
    f->policy.rules.count = 0;
    policy_free(&f->policy);
    engine_state_free(&f->state);
    snapshot_free(&f->snap);
    decisions_free(&f->out);
    free(f);
    return 0;
}

/* One engine step at T0 + t seconds, covering the 2 s before; alice
 * (uid 1001) using cpu cores, with one process of the given class. */
static void step(struct fixture *f, unsigned t, double cpu, enum proc_class class,
                 const char *rule, const char *comm)
{
    snapshot_clear(&f->snap);
    f->snap.now = T0 + t * SEC;
    f->snap.interval = 2 * SEC;
    struct user_sample *u = snapshot_add_user(&f->snap, 1001);
    snprintf(u->name, sizeof(u->name), "alice");
    u->cpu = cpu;
    u->memory = 300ULL << 20;
    u->detailed = true;
    struct proc_sample *ps = snapshot_add_proc(&f->snap);
    ps->pid = 4242;
    ps->start_time = 77;
    ps->uid = 1001;
    ps->cpu = cpu;
    ps->rss = 300ULL << 20;
    ps->class = class;
    ps->rule = rule;
    snprintf(ps->comm, sizeof(ps->comm), "%s", comm);
    decisions_clear(&f->out);
    engine_step(&f->policy, &f->state, &f->snap, &f->out);
}

/* The facts the daemon's edge would gather after the last step. */
static const struct why_answer *explain(struct fixture *f)
{
    struct why_facts *x = &f->facts;
    const struct proc_sample *ps = f->snap.proc_count ? &f->snap.procs[0] : NULL;
    *x = (struct why_facts){
        .policy = &f->policy, .now = f->snap.now, .found = true, .pid = 4242,
        .start_time = 77, .uid = 1001, .owner = 1001, .user_name = "alice",
        .comm = ps ? ps->comm : "x", .proc = ps, .user = snapshot_find_user(&f->snap, 1001),
        .state = engine_user(&f->state, 1001, false),
        .watch = engine_watch(&f->state, 4242, 77),
    };
    for (size_t i = 0; ps && ps->rule && i < 2; i++)
        if (strcmp(f->rules[i].name, ps->rule) == 0)
            x->rule = &f->rules[i];
    why_explain(x, &f->answer);
    return &f->answer;
}

static void no_such_process(void **state)
{
    struct fixture *f = *state;
    struct why_facts x = {.policy = &f->policy, .pid = 9};
    struct why_answer a;
    why_explain(&x, &a);
    assert_int_equal(a.verdict, WHY_NO_PROCESS);
    assert_string_equal(a.lines[0], "no such process");
    assert_int_equal(a.line_count, 1);
}

static void root_and_system_users_are_not_judged(void **state)
{
    struct fixture *f = *state;
    step(f, 2, 0.1, CLASS_NONE, NULL, "bash");
    explain(f);
    f->facts.owner = f->facts.uid = 0;
    why_explain(&f->facts, &f->answer);
    assert_int_equal(f->answer.verdict, WHY_NOT_JUDGED);
    assert_string_equal(f->answer.lines[0], "not a process the daemon judges (root's)");
    f->facts.owner = f->facts.uid = 998;
    why_explain(&f->facts, &f->answer);
    assert_string_equal(f->answer.lines[0],
                        "not a process the daemon judges (uid 998 is below min_uid 1000)");
}

/* A Slurm job's process: Slurm's, whatever its class or its owner's
 * standing (an exempt user's too: the job is the first reason). */
static void a_slurm_jobs_process_is_slurms(void **state)
{
    struct fixture *f = *state;
    step(f, 2, 3, CLASS_FORBIDDEN, "xmrig", "xmrig");
    f->snap.procs[0].slurm_job = 4242;
    explain(f);
    assert_int_equal(f->answer.verdict, WHY_JOB);
    assert_int_equal(f->answer.line_count, 1);
    assert_string_equal(f->answer.lines[0], "part of Slurm job 4242: Slurm limits it; it is not "
                                            "judged here and does not count toward alice's usage");
    json_t *j = why_json(&f->facts, &f->answer);
    assert_string_equal(json_string_value(json_object_get(j, "verdict")), "job");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "process"),
                                                        "slurm_job")),
                     4242);
    json_decref(j);
    f->facts.in_exempt_group = true;
    f->snap.procs[0].slurm_job = SLURM_JOB_UNKNOWN;
    why_explain(&f->facts, &f->answer);
    assert_int_equal(f->answer.verdict, WHY_JOB);
    assert_string_equal(f->answer.lines[0], "part of a Slurm job (its id not known): Slurm limits "
                                            "it; it is not judged here and does not count toward "
                                            "alice's usage");
    j = why_json(&f->facts, &f->answer);
    assert_true(json_is_null(json_object_get(json_object_get(j, "process"), "slurm_job")));
    json_decref(j);
    /* Root's is no one's to judge, in a job or not. */
    f->facts.owner = f->facts.uid = 0;
    why_explain(&f->facts, &f->answer);
    assert_int_equal(f->answer.verdict, WHY_NOT_JUDGED);
}

static void a_subordinate_uid_is_judged_as_its_owner(void **state)
{
    struct fixture *f = *state;
    step(f, 2, 0.2, CLASS_NONE, NULL, "bash");
    explain(f);
    f->facts.uid = 3000000005; /* in alice's subordinate range */
    why_explain(&f->facts, &f->answer);
    assert_int_equal(f->answer.verdict, WHY_BELOW);
    json_t *j = why_json(&f->facts, &f->answer);
    const json_t *p = json_object_get(j, "process");
    assert_int_equal(json_integer_value(json_object_get(p, "uid")), 3000000005);
    assert_int_equal(json_integer_value(json_object_get(p, "owner_uid")), 1001);
    json_decref(j);
}

static void an_exempt_group_protects(void **state)
{
    struct fixture *f = *state;
    step(f, 2, 3, CLASS_FORBIDDEN, "xmrig", "xmrig");
    explain(f);
    f->facts.in_exempt_group = true;
    f->facts.exempt_group = "hpcadmin";
    why_explain(&f->facts, &f->answer);
    assert_int_equal(f->answer.verdict, WHY_PROTECTED);
    assert_string_equal(f->answer.lines[0], "protected: member of group hpcadmin ([exempt] groups)");
}

static void an_exempt_user_is_protected(void **state)
{
    struct fixture *f = *state;
    f->policy.exempt_users.names[0] = xstrdup("alice");
    f->policy.exempt_users.count = 1;
    step(f, 2, 3, CLASS_NONE, NULL, "sim");
    explain(f);
    assert_int_equal(f->answer.verdict, WHY_PROTECTED);
    assert_string_equal(f->answer.lines[0], "protected: user alice is listed in [exempt] users");
}

static void a_temporary_exemption_says_until_when_and_why(void **state)
{
    struct fixture *f = *state;
    engine_exempt(&f->state, 1001, T0 + 3 * 3600 * SEC);
    step(f, 2, 3, CLASS_NONE, NULL, "sim");
    explain(f);
    f->facts.exempt_reason = "course \x1b[31mdemo";
    why_explain(&f->facts, &f->answer);
    assert_int_equal(f->answer.verdict, WHY_PROTECTED);
    /* 22:13:20 + 3 h, the same day in UTC?  No: the next day. */
    assert_string_equal(f->answer.lines[0],
                        "temporarily exempt until 2023-11-15 01:13 (reason: course \\x1b[31mdemo)");
}

static void a_forbidden_program_names_its_rule_and_the_part_that_matched(void **state)
{
    struct fixture *f = *state;
    step(f, 2, 3, CLASS_FORBIDDEN, "xmrig", "xmrig");
    f->snap.procs[0].exe = xstrdup("/usr/bin/xmrig");
    explain(f);
    assert_int_equal(f->answer.verdict, WHY_FORBIDDEN);
    assert_string_equal(f->answer.lines[0],
                        "class forbidden (rule xmrig, exe /usr/bin/xmrig): stopped on sight");
    json_t *j = why_json(&f->facts, &f->answer);
    assert_string_equal(json_string_value(json_object_get(j, "verdict")), "forbidden");
    const json_t *m = json_array_get(json_object_get(json_object_get(j, "rule"), "matched"), 0);
    assert_string_equal(json_string_value(json_object_get(m, "field")), "exe");
    assert_string_equal(json_string_value(json_object_get(m, "pattern")), "/usr/bin/xmrig");
    json_decref(j);
    f->policy.mode = MODE_OBSERVE;
    why_explain(&f->facts, &f->answer);
    assert_string_equal(f->answer.lines[0],
                        "class forbidden (rule xmrig, exe /usr/bin/xmrig): would be stopped on "
                        "sight (observe mode stops nothing)");
}

static void a_compute_program_in_its_grace_says_what_is_left(void **state)
{
    struct fixture *f = *state;
    for (unsigned t = 2; t <= 20; t += 2)
        step(f, t, 1.2, CLASS_COMPUTE, "lammps", "lmp_serial");
    explain(f);
    assert_int_equal(f->answer.verdict, WHY_COMPUTE_GRACE);
    /* Above since the interval before the first step: 20 s of 60. */
    assert_string_equal(f->answer.lines[0], "class compute (rule lammps, comm lmp_serial), "
                                            "grace 1m, 40s left: 1.2 cores, above 1");
    json_t *j = why_json(&f->facts, &f->answer);
    const json_t *g = json_object_get(j, "grace");
    assert_true(json_real_value(json_object_get(g, "left_s")) == 40.0);
    json_decref(j);
    for (unsigned t = 22; t <= 60; t += 2)
        step(f, t, 1.2, CLASS_COMPUTE, "lammps", "lmp_serial");
    explain(f);
    assert_int_equal(f->answer.verdict, WHY_COMPUTE_ACTED);
    assert_string_equal(f->answer.lines[0], "class compute (rule lammps, comm lmp_serial), "
                                            "grace 1m: above 1 cores past its grace, stopped");
}

static void a_quiet_compute_program_is_judged_by_its_users_usage(void **state)
{
    struct fixture *f = *state;
    step(f, 2, 0.5, CLASS_COMPUTE, "lammps", "lmp_serial");
    explain(f);
    assert_int_equal(f->answer.verdict, WHY_BELOW);
    assert_int_equal(f->answer.line_count, 2);
    assert_string_equal(f->answer.lines[0], "below every threshold: 0.5 cores of 1.5, 300 MiB "
                                            "of 8 GiB");
    assert_string_equal(f->answer.lines[1], "class compute (rule lammps, comm lmp_serial): 0.5 "
                                            "cores, not above its 1; its grace of 1m starts "
                                            "when it is");
}

static void a_hog_is_shown_its_window_progress(void **state)
{
    struct fixture *f = *state;
    for (unsigned t = 2; t <= 190; t += 2)
        step(f, t, 1.8, CLASS_NONE, NULL, "python3");
    explain(f);
    assert_int_equal(f->answer.verdict, WHY_WATCHED);
    assert_string_equal(f->answer.lines[0], "user alice: 1.8 cores of 1.5 for 3m10s of a 5m window");
    json_t *j = why_json(&f->facts, &f->answer);
    const json_t *run = json_object_get(json_object_get(j, "user"), "cpu_run");
    assert_true(json_real_value(json_object_get(run, "elapsed_s")) == 190.0);
    json_decref(j);
}

static void a_limited_user_is_shown_their_level(void **state)
{
    struct fixture *f = *state;
    f->policy.levels[0].duration = 600 * SEC;
    for (unsigned t = 2; t <= 302; t += 2)
        step(f, t, 1.8, CLASS_NONE, NULL, "python3");
    assert_int_equal(engine_user(&f->state, 1001, false)->level, 1);
    explain(f);
    assert_int_equal(f->answer.verdict, WHY_LIMITED);
    char want[200];
    snprintf(want, sizeof(want), "user alice at level 1 (%s) until 22:28 after 1 violation",
             f->policy.levels[0].name);
    assert_true(strncmp(f->answer.lines[0], want, strlen(want)) == 0);
}

static void below_every_threshold(void **state)
{
    struct fixture *f = *state;
    step(f, 2, 0.2, CLASS_NONE, NULL, "vim");
    explain(f);
    assert_int_equal(f->answer.verdict, WHY_BELOW);
    assert_string_equal(f->answer.lines[0], "below every threshold: 0.2 cores of 1.5, 300 MiB "
                                            "of 8 GiB");
}

static void hostile_names_are_shown_escaped(void **state)
{
    struct fixture *f = *state;
    step(f, 2, 3, CLASS_FORBIDDEN, "xmrig", "x\x1b]0;pwn\x07");
    f->snap.procs[0].exe = xstrdup("/tmp/\xe2\x80\xae" "evil\xff");
    explain(f);
    assert_string_equal(f->answer.lines[0], "class forbidden (rule xmrig, exe "
                                            "/tmp/\\xe2\\x80\\xaeevil\\xff): stopped on sight");
    for (size_t i = 0; i < f->answer.line_count; i++)
        for (const char *c = f->answer.lines[i]; *c; c++)
            assert_true((unsigned char)*c >= ' ' && *c != 0x7f);
}

static void not_yet_sampled(void **state)
{
    struct fixture *f = *state;
    step(f, 2, 0.2, CLASS_NONE, NULL, "vim");
    explain(f);
    f->facts.proc = NULL;
    why_explain(&f->facts, &f->answer);
    assert_int_equal(f->answer.verdict, WHY_NOT_SAMPLED);
    assert_string_equal(f->answer.lines[1], "below every threshold: 0.2 cores of 1.5, 300 MiB "
                                            "of 8 GiB");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(no_such_process, setup, teardown),
        cmocka_unit_test_setup_teardown(root_and_system_users_are_not_judged, setup, teardown),
        cmocka_unit_test_setup_teardown(a_subordinate_uid_is_judged_as_its_owner, setup, teardown),
        cmocka_unit_test_setup_teardown(a_slurm_jobs_process_is_slurms, setup, teardown),
        cmocka_unit_test_setup_teardown(an_exempt_group_protects, setup, teardown),
        cmocka_unit_test_setup_teardown(an_exempt_user_is_protected, setup, teardown),
        cmocka_unit_test_setup_teardown(a_temporary_exemption_says_until_when_and_why, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            a_forbidden_program_names_its_rule_and_the_part_that_matched, setup, teardown),
        cmocka_unit_test_setup_teardown(a_compute_program_in_its_grace_says_what_is_left, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_quiet_compute_program_is_judged_by_its_users_usage,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_hog_is_shown_its_window_progress, setup, teardown),
        cmocka_unit_test_setup_teardown(a_limited_user_is_shown_their_level, setup, teardown),
        cmocka_unit_test_setup_teardown(below_every_threshold, setup, teardown),
        cmocka_unit_test_setup_teardown(hostile_names_are_shown_escaped, setup, teardown),
        cmocka_unit_test_setup_teardown(not_yet_sampled, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
