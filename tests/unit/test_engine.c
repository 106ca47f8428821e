#include "config.h"

#include "engine.h"
#include "testutil.h"
#include "units.h"
#include "util.h"

#define SEC USEC_PER_SEC
#define T0 (1700000000ULL * SEC) /* an arbitrary wall-clock origin */

struct fixture {
    struct policy policy;
    struct engine_state state;
    struct snapshot snap;
    struct decisions out;
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    policy_init_defaults(&f->policy);
    f->policy.window = 10 * SEC;
    f->policy.violation_cpu = 2;
    f->policy.violation_memory = 8ULL << 30;
    f->policy.decay = 3600 * SEC;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    policy_free(&f->policy);
    engine_state_free(&f->state);
    snapshot_free(&f->snap);
    decisions_free(&f->out);
    free(f);
    return 0;
}

/* Start a snapshot at T0 + t seconds covering the 2 s before. */
static void begin(struct fixture *f, unsigned t)
{
    snapshot_clear(&f->snap);
    f->snap.now = T0 + t * SEC;
    f->snap.interval = 2 * SEC;
}

static struct user_sample *user(struct fixture *f, uid_t uid, const char *name, double cpu,
                                uint64_t memory)
{
    struct user_sample *u = snapshot_add_user(&f->snap, uid);
    snprintf(u->name, sizeof(u->name), "%s", name);
    u->cpu = cpu;
    u->memory = memory;
    u->detailed = true;
    return u;
}

static struct proc_sample *proc(struct fixture *f, pid_t pid, uid_t uid, const char *comm,
                                double cpu, enum proc_class class, const char *rule)
{
    struct proc_sample *p = snapshot_add_proc(&f->snap);
    p->pid = pid;
    p->start_time = 1000 + (uint64_t)pid;
    p->uid = uid;
    snprintf(p->comm, sizeof(p->comm), "%s", comm);
    p->cpu = cpu;
    p->class = class;
    p->rule = rule;
    return p;
}

static size_t step(struct fixture *f)
{
    decisions_clear(&f->out);
    engine_step(&f->policy, &f->state, &f->snap, &f->out);
    return f->out.count;
}

/* One user alone at the given usage, sampled every 2 s from `from` to
 * `to` inclusive; returns the time of the first decision, or 0. */
static unsigned run_user(struct fixture *f, uid_t uid, double cpu, uint64_t mem, unsigned from,
                         unsigned to)
{
    for (unsigned t = from; t <= to; t += 2) {
        begin(f, t);
        user(f, uid, "alice", cpu, mem);
        if (step(f))
            return t;
    }
    return 0;
}

static void test_less_than_window_is_not_flagged(void **state)
{
    struct fixture *f = *state;
    /* 3 cores from t=0: samples at 2..8 cover 0..8, less than 10 s. */
    assert_int_equal(run_user(f, 1001, 3, 0, 2, 8), 0);
    /* Idle until the run's average is no longer above 2 cores (24 core-s
     * over 12 s at t=12) ends the run... */
    assert_int_equal(run_user(f, 1001, 0, 0, 10, 12), 0);
    /* (A user with nothing to remember is dropped from the table.) */
    assert_null(engine_user(&f->state, 1001, false));
    /* ...so the next run needs a whole window again: 12..22. */
    assert_int_equal(run_user(f, 1001, 3, 0, 14, 20), 0);
    assert_int_equal(run_user(f, 1001, 3, 0, 22, 22), 22);
}

static void test_short_dip_does_not_reset_the_run(void **state)
{
    struct fixture *f = *state;
    /* 3 cores, one interval at 1 core (another user's burst), 3 cores:
     * the run's average stays above 2 cores, flagged at the window. */
    assert_int_equal(run_user(f, 1001, 3, 0, 2, 4), 0);
    assert_int_equal(run_user(f, 1001, 1, 0, 6, 6), 0);
    assert_int_equal(run_user(f, 1001, 3, 0, 8, 10), 10);
    assert_true(f->out.items[0].cpu > 2.59 && f->out.items[0].cpu < 2.61);
}

static void test_whole_window_is_flagged(void **state)
{
    struct fixture *f = *state;
    begin(f, 2);
    user(f, 1001, "alice", 2.5, 1ULL << 30);
    proc(f, 500, 1001, "sim", 1.5, CLASS_NONE, NULL);
    proc(f, 501, 1001, "sshd", 0.1, CLASS_EXEMPT, "sshd");
    proc(f, 502, 1001, "helper", 1.0, CLASS_NONE, NULL);
    proc(f, 600, 1002, "other", 1.9, CLASS_NONE, NULL);
    assert_int_equal(step(f), 0);
    assert_int_equal(run_user(f, 1001, 2.5, 1ULL << 30, 4, 8), 0);
    begin(f, 10);
    user(f, 1001, "alice", 2.5, 1ULL << 30);
    proc(f, 502, 1001, "helper", 1.0, CLASS_NONE, NULL);
    proc(f, 501, 1001, "sshd", 0.1, CLASS_EXEMPT, "sshd");
    proc(f, 600, 1002, "other", 1.9, CLASS_NONE, NULL);
    proc(f, 500, 1001, "sim", 1.5, CLASS_NONE, NULL);
    assert_int_equal(step(f), 1);
    const struct decision *d = &f->out.items[0];
    assert_int_equal(d->kind, DECISION_VIOLATION);
    assert_int_equal(d->uid, 1001);
    assert_int_equal(d->level_before, 0);
    assert_int_equal(d->level_after, 1);
    assert_string_equal(d->reason, "cpu");
    assert_int_equal(d->window, 10 * SEC);
    assert_true(d->cpu > 2.49 && d->cpu < 2.51);
    assert_int_equal(d->memory, 1ULL << 30);
    assert_int_equal(d->until, T0 + 10 * SEC + 15 * 60 * SEC);
    /* Kept with the user: what they are told at their next login. */
    const struct user_state *us = engine_user(&f->state, 1001, false);
    assert_int_equal(us->last_reason, VIOLATION_REASON_CPU);
    assert_string_equal(violation_reason_name(us->last_reason), "cpu");
    assert_true(us->last_cpu == d->cpu);
    assert_int_equal(us->last_memory, 1ULL << 30);
    assert_int_equal(us->last_window, 10 * SEC);
    /* Top processes: this user's, highest CPU first, exempt ones too
     * (the stopper spares them; an event shows them). */
    assert_int_equal(d->proc_count, 3);
    assert_string_equal(f->snap.procs[d->procs[0]].comm, "sim");
    assert_string_equal(f->snap.procs[d->procs[1]].comm, "helper");
    assert_string_equal(f->snap.procs[d->procs[2]].comm, "sshd");
}

/* Exempt programs: up to the allowance their use is forgiven, beyond it
 * it counts (code loaded into sshd or tmux is still the user's work). */
static unsigned exempt_run(struct fixture *f, double total, double exempt, uint64_t memory,
                           uint64_t exempt_memory, unsigned from, unsigned to)
{
    for (unsigned t = from; t <= to; t += 2) {
        begin(f, t);
        struct user_sample *u = user(f, 1001, "alice", total, memory);
        u->exempt_cpu = exempt;
        u->exempt_memory = exempt_memory;
        if (step(f))
            return t;
    }
    return 0;
}

static void test_exempt_use_within_the_allowance_is_forgiven(void **state)
{
    struct fixture *f = *state;
    f->policy.exempt_cpu = 1;
    /* 2.8 cores, 1 of them in sftp-server: 1.8 counts, below 2. */
    assert_int_equal(exempt_run(f, 2.8, 1.0, 0, 0, 2, 30), 0);
}

static void test_exempt_use_beyond_the_allowance_counts(void **state)
{
    struct fixture *f = *state;
    f->policy.exempt_cpu = 1;
    /* 3.2 cores, all in an exempt program (a spinning LD_PRELOAD library
     * in tmux): 2.2 count, above 2 for the whole window. */
    assert_int_equal(exempt_run(f, 3.2, 3.2, 0, 0, 2, 30), 10);
    assert_int_equal(f->out.items[0].kind, DECISION_VIOLATION);
    assert_true(f->out.items[0].cpu > 2.19 && f->out.items[0].cpu < 2.21);
}

static void test_exempt_memory_beyond_the_allowance_counts(void **state)
{
    struct fixture *f = *state;
    f->policy.exempt_memory = 1ULL << 30;
    /* 9 GiB held by an exempt program: 8 count, not above 8 GiB... */
    assert_int_equal(exempt_run(f, 0, 0, 9ULL << 30, 9ULL << 30, 2, 30), 0);
    /* ...10 GiB: 9 count, above for a window from 30. */
    assert_int_equal(exempt_run(f, 0, 0, 10ULL << 30, 10ULL << 30, 32, 50), 40);
    assert_string_equal(f->out.items[0].reason, "memory");
}

static void test_levels_rise_to_the_top_and_stay(void **state)
{
    struct fixture *f = *state;
    int expected[][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 3}};
    unsigned t = 0;
    for (int i = 0; i < 4; i++) {
        t = run_user(f, 1001, 4, 0, t + 2, t + 100);
        /* A window, then each next rung a window after the interval that
         * followed the violation (see the next test). */
        assert_int_equal(t, 10 + 12 * i);
        assert_int_equal(f->out.items[0].kind, DECISION_VIOLATION);
        assert_int_equal(f->out.items[0].level_before, expected[i][0]);
        assert_int_equal(f->out.items[0].level_after, expected[i][1]);
    }
    const struct user_state *us = engine_user(&f->state, 1001, false);
    assert_int_equal(us->violations, 4);
    assert_int_equal(us->until, T0 + 46 * SEC + 3600 * SEC);
}

/* The sample after a violation waits for the new level's limits to be
 * set, which a backend can take seconds over (systemd over D-Bus on a
 * busy node): that interval, spent without them, is no part of the next
 * rung's window, whatever the clocks say of its length.  Before, a burst that went on for one window while the
 * limits were being set climbed two levels at once. */
static void test_the_next_rung_counts_from_the_new_limits(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(run_user(f, 1001, 4, 0, 2, 10), 10);
    assert_int_equal(f->out.items[0].level_after, 1);
    /* The limits took 9 s to set: the next sample covers 10..19 at full
     * speed.  Then the user runs on, throttled but above the line. */
    begin(f, 19);
    f->snap.interval = 9 * SEC;
    /* The wall clock read a little later than the interval's own clock
     * (the daemon was waiting for the CPU between the two reads). */
    f->snap.now += 5000;
    user(f, 1001, "alice", 4, 0);
    assert_int_equal(step(f), 0);
    assert_int_equal(run_user(f, 1001, 2.5, 0, 21, 27), 0); /* 19..27: not a window */
    assert_int_equal(run_user(f, 1001, 2.5, 0, 29, 40), 29);
    assert_int_equal(f->out.items[0].level_after, 2);
    assert_true(f->out.items[0].window >= 10 * SEC);
}

static void test_level_expires_then_decays(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(run_user(f, 1001, 3, 0, 2, 10), 10);
    /* The user goes quiet (and even logs out: no longer in snapshots). */
    begin(f, 10 + 15 * 60 - 2);
    assert_int_equal(step(f), 0);
    begin(f, 10 + 15 * 60);
    assert_int_equal(step(f), 1);
    assert_int_equal(f->out.items[0].kind, DECISION_EXPIRED);
    assert_int_equal(f->out.items[0].level_after, 1);
    begin(f, 10 + 15 * 60 + 3600 - 2);
    assert_int_equal(step(f), 0);
    begin(f, 10 + 15 * 60 + 3600);
    assert_int_equal(step(f), 1);
    assert_int_equal(f->out.items[0].kind, DECISION_DECAYED);
    assert_int_equal(f->out.items[0].level_before, 1);
    assert_int_equal(f->out.items[0].level_after, 0);
    /* Nothing left to remember but the count of violations. */
    assert_int_equal(engine_user(&f->state, 1001, false)->violations, 1);
}

static void test_memory_violation(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(run_user(f, 1001, 0.1, 9ULL << 30, 2, 8), 0);
    assert_int_equal(run_user(f, 1001, 0.1, 10ULL << 30, 10, 10), 10);
    assert_string_equal(f->out.items[0].reason, "memory");
    assert_int_equal(f->out.items[0].memory, 10ULL << 30);
    /* It names the process that holds the memory first, not the busiest:
     * the parent that filled its child's memory, say. */
    size_t n = 0;
    for (unsigned t = 12; t <= 30 && n == 0; t += 2) {
        begin(f, t);
        user(f, 1002, "bob", 0.3, 10ULL << 30);
        proc(f, 7, 1002, "filler", 0.3, CLASS_NONE, NULL)->rss = 2ULL << 20;
        proc(f, 8, 1002, "holder", 0, CLASS_NONE, NULL)->rss = 9ULL << 30;
        n = step(f);
    }
    assert_int_equal(n, 1);
    const struct decision *d = &f->out.items[0];
    assert_int_equal(d->proc_count, 2);
    assert_int_equal(f->snap.procs[d->procs[0]].pid, 8);
}

/* A sample of bob's at t: his total, a big exempt process, and his
 * largest one that is not. */
static size_t bob_holds(struct fixture *f, unsigned t, uint64_t total)
{
    begin(f, t);
    user(f, 1002, "bob", 0.1, total);
    proc(f, 7, 1002, "sshd", 0, CLASS_EXEMPT, "sshd")->rss = total / 2;
    proc(f, 8, 1002, "holder", 0, CLASS_NONE, NULL)->rss = total / 3;
    proc(f, 9, 1002, "shell", 0, CLASS_NONE, NULL)->rss = 4 << 20;
    return step(f);
}

/* Above his level's memory at every sample for a whole window (the
 * limit did not take), a user has his largest process that is not exempt
 * stopped; the next one after another window; a sample below starts the
 * count again. */
static void test_memory_over_level(void **state)
{
    struct fixture *f = *state;
    f->policy.levels[0].memory = 4ULL << 30;
    unsigned t = 2;
    while (!bob_holds(f, t, 10ULL << 30))
        t += 2;
    assert_int_equal(f->out.items[0].kind, DECISION_VIOLATION);
    unsigned first = 0;
    for (t += 2; t < 60 && !first; t += 2)
        if (bob_holds(f, t, 6ULL << 30))
            first = t;
    assert_true(first > 0);
    const struct decision *d = &f->out.items[0];
    assert_int_equal(d->kind, DECISION_MEMORY_OVER);
    assert_string_equal(decision_name(d->kind), "memory_over_level");
    assert_int_equal(d->level_after, 1);
    assert_int_equal(d->memory, 6ULL << 30);
    assert_true(d->window >= f->policy.window - 50000);
    assert_int_equal(d->proc_count, 1);
    assert_int_equal(f->snap.procs[d->procs[0]].pid, 8);
    /* The next one only after another whole window. */
    unsigned second = 0;
    for (t = first + 2; t < first + 60 && !second; t += 2)
        if (bob_holds(f, t, 6ULL << 30))
            second = t;
    assert_true(second >= first + 10);
    /* Below the level's memory once: the count starts again. */
    for (t = second + 2; t < second + 10; t += 2)
        assert_int_equal(bob_holds(f, t, 6ULL << 30), 0);
    assert_int_equal(bob_holds(f, t, 3ULL << 30), 0);
    for (unsigned k = t + 2; k < t + 10; k += 2)
        assert_int_equal(bob_holds(f, k, 6ULL << 30), 0);
}

static void test_memory_pressure_acts_at_once(void **state)
{
    struct fixture *f = *state;
    f->policy.memory_pressure = 20;
    /* Above [violation] memory but the node is fine: the window applies. */
    begin(f, 2);
    f->snap.memory_pressure = 5;
    user(f, 1001, "alice", 0.1, 9ULL << 30);
    assert_int_equal(step(f), 0);
    /* The node stalls on memory: at once. */
    begin(f, 4);
    f->snap.memory_pressure = 35.5;
    user(f, 1001, "alice", 0.1, 9ULL << 30);
    user(f, 1002, "bob", 0.1, 1ULL << 30); /* below the threshold: not him */
    assert_int_equal(step(f), 1);
    assert_int_equal(f->out.items[0].uid, 1001);
    assert_string_equal(f->out.items[0].reason, "memory_pressure");
    /* Off (0) or unknown (-1, no PSI): the window again. */
    f->policy.memory_pressure = 0;
    begin(f, 6);
    f->snap.memory_pressure = 90;
    user(f, 1003, "carol", 0.1, 9ULL << 30);
    assert_int_equal(step(f), 0);
    f->policy.memory_pressure = 20;
    begin(f, 8);
    f->snap.memory_pressure = -1;
    user(f, 1004, "dave", 0.1, 9ULL << 30);
    assert_int_equal(step(f), 0);
}

static void test_protected_users_are_never_flagged(void **state)
{
    struct fixture *f = *state;
    set_string(&f->policy.exempt_users.names[0], "bob");
    f->policy.exempt_users.count = 1;
    for (unsigned t = 2; t <= 60; t += 2) {
        begin(f, t);
        user(f, 0, "root", 8, 20ULL << 30);
        user(f, 999, "builder", 8, 20ULL << 30); /* below min_uid 1000 */
        user(f, 1002, "bob", 8, 20ULL << 30);
        user(f, 1003, "carol", 8, 20ULL << 30)->exempt_group = true;
        proc(f, 700, 0, "xmrig", 2, CLASS_FORBIDDEN, "xmrig");
        proc(f, 701, 1002, "xmrig", 2, CLASS_FORBIDDEN, "xmrig");
        assert_int_equal(step(f), 0);
    }
}

static void test_temporary_exemption(void **state)
{
    struct fixture *f = *state;
    engine_user(&f->state, 1001, true)->exempt_until = T0 + 30 * SEC;
    assert_int_equal(run_user(f, 1001, 3, 0, 2, 28), 0);
    /* It ends at 30; the sample at 30 covers 28..30, so a whole new
     * window ends at 38. */
    assert_int_equal(run_user(f, 1001, 3, 0, 30, 36), 30);
    assert_int_equal(f->out.count, 1);
    assert_int_equal(f->out.items[0].kind, DECISION_EXEMPT_ENDED);
    assert_string_equal(decision_name(f->out.items[0].kind), "exempt_ended");
    assert_int_equal(engine_user(&f->state, 1001, false)->exempt_until, 0);
    assert_int_equal(run_user(f, 1001, 3, 0, 32, 36), 0);
    assert_int_equal(run_user(f, 1001, 3, 0, 38, 38), 38);
    assert_int_equal(f->out.items[0].kind, DECISION_VIOLATION);
}

/* loginguardctl exempt: added on a user the engine did not know, removed
 * by the admin (no exempt_ended then: nothing ran out). */
static void test_exemption_added_and_removed(void **state)
{
    struct fixture *f = *state;
    engine_exempt(&f->state, 1001, T0 + 3600 * SEC);
    assert_int_equal(run_user(f, 1001, 3, 0, 2, 20), 0);
    engine_exempt(&f->state, 1001, 0);
    assert_int_equal(run_user(f, 1001, 3, 0, 22, 30), 30);
    assert_int_equal(f->out.items[0].kind, DECISION_VIOLATION);
    engine_exempt(&f->state, 1002, 0); /* no state: nothing made */
    assert_null(engine_user(&f->state, 1002, false));
}

/* loginguardctl forgive: level none, no limits, and the run that was
 * being watched starts afresh. */
static void test_forgive(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(run_user(f, 1001, 3, 0, 2, 10), 10);
    const struct user_state *us = engine_user(&f->state, 1001, false);
    assert_int_equal(us->level, 1);
    assert_true(us->until > T0 + 10 * SEC);
    assert_int_equal(run_user(f, 1001, 3, 0, 12, 16), 0); /* a new run, 10..16 */
    assert_int_equal(engine_forgive(&f->state, 1001, T0 + 16 * SEC), 1);
    us = engine_user(&f->state, 1001, false);
    assert_int_equal(us->level, 0);
    assert_int_equal(us->until, 0);
    assert_int_equal(us->violations, 1); /* history is kept */
    /* Without the forgiven run, the next violation needs 16..26. */
    assert_int_equal(run_user(f, 1001, 3, 0, 18, 24), 0);
    assert_int_equal(run_user(f, 1001, 3, 0, 26, 26), 26);
    assert_int_equal(f->out.items[0].level_before, 0);
    assert_int_equal(f->out.items[0].level_after, 1);
    assert_int_equal(engine_forgive(&f->state, 4242, T0), 0);
    assert_null(engine_user(&f->state, 4242, false));
}

static void test_idle_user_is_never_flagged(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(run_user(f, 1001, 0.01, 100 << 20, 2, 3600), 0);
    assert_null(engine_user(&f->state, 1001, false));
}

static void test_compute_after_grace(void **state)
{
    struct fixture *f = *state;
    f->policy.compute_cpu = 0.5;
    f->policy.compute_grace = 6 * SEC;
    /* Under the compute threshold: never. */
    for (unsigned t = 2; t <= 20; t += 2) {
        begin(f, t);
        user(f, 1001, "alice", 0.4, 0);
        proc(f, 800, 1001, "gmx", 0.4, CLASS_COMPUTE, "gromacs");
        assert_int_equal(step(f), 0);
    }
    /* Above it from t=20: reported at 28 (run 20..28 >= 6 s)? the run
     * starts with the interval 20..22, so at 26 it has lasted 6 s. */
    unsigned reported = 0;
    for (unsigned t = 22; t <= 40; t += 2) {
        begin(f, t);
        user(f, 1001, "alice", 1.0, 0);
        proc(f, 800, 1001, "gmx", 1.0, CLASS_COMPUTE, "gromacs");
        if (step(f)) {
            assert_int_equal(reported, 0);
            reported = t;
            assert_int_equal(f->out.items[0].kind, DECISION_COMPUTE);
            assert_string_equal(f->out.items[0].reason, "gromacs");
            assert_int_equal(f->out.items[0].proc_count, 1);
        }
    }
    assert_int_equal(reported, 26);
}

static void test_forbidden_on_sight_once(void **state)
{
    struct fixture *f = *state;
    for (unsigned t = 2; t <= 10; t += 2) {
        begin(f, t);
        user(f, 1001, "alice", 0.1, 0);
        proc(f, 900, 1001, "xmrig", 0.01, CLASS_FORBIDDEN, "xmrig");
        assert_int_equal(step(f), t == 2 ? 1 : 0);
        if (t == 2) {
            assert_int_equal(f->out.items[0].kind, DECISION_FORBIDDEN);
            assert_int_equal(f->snap.procs[f->out.items[0].procs[0]].pid, 900);
        }
    }
    /* The same pid with another start time is another process. */
    begin(f, 12);
    user(f, 1001, "alice", 0.1, 0);
    proc(f, 900, 1001, "xmrig", 0.01, CLASS_FORBIDDEN, "xmrig")->start_time = 99999;
    assert_int_equal(step(f), 1);
}

/* Which processes a stopping level stops: the busy ones, and under a
 * throttle also those with a tenth of their user's use (a job's four
 * ranks held to 0.2 cores between them, a loop that waited on a child at
 * that sample); never an exempt one, never one next to idle. */
static void test_offending_processes(void **state)
{
    (void)state;
    struct decision d = {.kind = DECISION_VIOLATION, .cpu = 0.49};
    struct proc_sample busy = {.cpu = 0.25}, waited = {.cpu = 0.079}, idle = {.cpu = 0.01},
                       exempt = {.cpu = 0.3, .class = CLASS_EXEMPT};
    assert_true(engine_offending(&d, &busy));
    assert_true(engine_offending(&d, &waited));   /* was let run: under 0.1 */
    assert_false(engine_offending(&d, &idle));
    assert_false(engine_offending(&d, &exempt));
    struct proc_sample rank = {.cpu = 0.05};
    d.cpu = 0.2;                                  /* four ranks under a throttle */
    assert_true(engine_offending(&d, &rank));
    d.cpu = 4;                                    /* unthrottled: 0.1 as before */
    struct proc_sample little = {.cpu = 0.09};
    assert_false(engine_offending(&d, &little));
    d.cpu = 0;                                    /* a memory violation */
    assert_false(engine_offending(&d, &idle));
    struct proc_sample some = {.cpu = 0.03};
    assert_true(engine_offending(&d, &some));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_less_than_window_is_not_flagged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_short_dip_does_not_reset_the_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_whole_window_is_flagged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exempt_use_within_the_allowance_is_forgiven, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_exempt_use_beyond_the_allowance_counts, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_exempt_memory_beyond_the_allowance_counts, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_levels_rise_to_the_top_and_stay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_next_rung_counts_from_the_new_limits, setup,
                                        teardown),
        cmocka_unit_test(test_offending_processes),
        cmocka_unit_test_setup_teardown(test_level_expires_then_decays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_violation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_over_level, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_pressure_acts_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_protected_users_are_never_flagged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_temporary_exemption, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exemption_added_and_removed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forgive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idle_user_is_never_flagged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compute_after_grace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_forbidden_on_sight_once, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
