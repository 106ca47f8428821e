/* The sampler on a fake /proc: a tree in a temporary directory, with the
 * files the sampler reads (stat, cmdline, exe), directories owned by the
 * users the processes run as, and a clock the test moves.  What is
 * asserted is what the sampler reports: per-user totals and the
 * processes of the users worth a closer look.  Needs root (the process
 * directories are given to other uids).
 *
 * What the processes run is judged by a judge of the test's own (a
 * program named xmrig is forbidden, /usr/sbin/sshd exempt): the sampler
 * applies no rules, and this test links none of their code. */
#include "config.h"

#include <sys/stat.h>
#include <unistd.h>

#include "base/environment.h"
#include "core/observe.h"
#include "judge.h"
#include "observe/sampler.h"
#include "slurm_job.h"
#include "testutil.h"

#define BOOT_SEC 10000   /* the fake clock's time since boot at the first sample */

struct fake_clock {
    uint64_t boot;  /* usec */
};

static uint64_t fake_boottime(void *clock)
{
    return ((struct fake_clock *)clock)->boot;
}

static uint64_t fake_realtime(void *clock)
{
    return 1700000000ULL * 1000000 + ((struct fake_clock *)clock)->boot;
}

/* The test's judge: every process its own program entry. */
static const struct rule miner_rule = {.name = "miner", .class = CLASS_FORBIDDEN};
static const struct rule ssh_rule = {.name = "ssh", .class = CLASS_EXEMPT};

static const struct program *fake_program(struct judge *j, const struct program_facts *f)
{
    (void)j;
    struct program *prog = calloc(1, sizeof(*prog));
    assert_non_null(prog);
    prog->exe = f->exe ? strdup(f->exe) : NULL;
    return prog;
}

static void fake_put(struct judge *j, const struct program *prog)
{
    (void)j;
    if (prog)
        free(prog->exe);
    free((struct program *)prog);
}

static struct verdict fake_verdict(const struct judge *j, const struct program *prog,
                                   const char *comm, bool foreign_code)
{
    (void)j, (void)foreign_code;
    if (strcmp(comm, "xmrig") == 0)
        return (struct verdict){CLASS_FORBIDDEN, &miner_rule, RULE_PART_COMM};
    if (prog && prog->exe && strcmp(prog->exe, "/usr/sbin/sshd") == 0)
        return (struct verdict){CLASS_EXEMPT, &ssh_rule, RULE_PART_EXE};
    return (struct verdict){CLASS_NONE, NULL, 0};
}

static void fake_forget_all(struct judge *j)
{
    (void)j;
}

static struct judge fake_judge = {fake_program, fake_put, fake_verdict, fake_forget_all};

struct fixture {
    struct fake_clock clock;
    struct environment env;
    struct policy policy;
    struct sampler sampler;
    struct snapshot snap;
    char proc[96];
    long hz;
};

static void proc_path(const struct fixture *f, char *buf, size_t len, int pid, const char *name)
{
    if (name)
        snprintf(buf, len, "%s/%d/%s", f->proc, pid, name);
    else
        snprintf(buf, len, "%s/%d", f->proc, pid);
}

/* Written in place (same inode): a descriptor the sampler holds sees it. */
static void put(const char *path, const char *content, size_t len)
{
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    assert_int_equal(fwrite(content, 1, len, out), len);
    fclose(out);
}

/* /proc/PID/stat as the kernel writes it: comm between the first "(" and
 * the last ")", whatever it holds; the parent ppid. */
static void put_stat_of(const struct fixture *f, int pid, int ppid, const char *comm,
                        uint64_t ticks, uint64_t threads, uint64_t start_ticks,
                        uint64_t rss_pages)
{
    char path[256], text[512];
    proc_path(f, path, sizeof(path), pid, "stat");
    int n = snprintf(text, sizeof(text),
                     "%d (%s) S %d %d %d 0 -1 4194560 0 0 0 0 %llu 0 0 0 20 0 %llu 0 %llu "
                     "1000000 %llu 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
                     pid, comm, ppid, pid, pid, (unsigned long long)ticks,
                     (unsigned long long)threads, (unsigned long long)start_ticks,
                     (unsigned long long)rss_pages);
    put(path, text, (size_t)n);
}

/* The same, a child of init. */
static void put_stat(const struct fixture *f, int pid, const char *comm, uint64_t ticks,
                     uint64_t threads, uint64_t start_ticks, uint64_t rss_pages)
{
    put_stat_of(f, pid, 1, comm, ticks, threads, start_ticks, rss_pages);
}

/* A process of uid, started long ago, with no CPU used yet. */
static void add_proc(const struct fixture *f, int pid, uid_t uid, const char *comm,
                     uint64_t threads, uint64_t rss_pages)
{
    char path[256];
    proc_path(f, path, sizeof(path), pid, NULL);
    assert_int_equal(mkdir(path, 0555), 0);
    put_stat(f, pid, comm, 0, threads, 100 * (uint64_t)f->hz, rss_pages);
    proc_path(f, path, sizeof(path), pid, "cmdline");
    put(path, "prog\0--flag\0", 12);
    proc_path(f, path, sizeof(path), pid, "exe");
    assert_int_equal(symlink("/usr/bin/prog", path), 0);
    /* In the daemon's mount namespace: its exe path means what it says. */
    proc_path(f, path, sizeof(path), pid, "ns");
    assert_int_equal(mkdir(path, 0555), 0);
    proc_path(f, path, sizeof(path), pid, "ns/mnt");
    assert_int_equal(symlink("../../mnt_ns", path), 0);
    proc_path(f, path, sizeof(path), pid, NULL);
    assert_int_equal(chown(path, uid, uid), 0);
}

static void set_exe(const struct fixture *f, int pid, const char *exe)
{
    char path[256];
    proc_path(f, path, sizeof(path), pid, "exe");
    assert_int_equal(unlink(path), 0);
    assert_int_equal(symlink(exe, path), 0);
}

/* One of pid's files (cgroup, status, cmdline) with this text. */
static void put_file(const struct fixture *f, int pid, const char *name, const char *text,
                     size_t len)
{
    char path[256];
    proc_path(f, path, sizeof(path), pid, name);
    put(path, text, len);
}

static void remove_proc(const struct fixture *f, int pid)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s/%d'", f->proc, pid);
    assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
    if (geteuid() != 0)
        return 0; /* each test skips */
    struct fixture *f = calloc(1, sizeof(*f));
    make_test_dir();
    snprintf(f->proc, sizeof(f->proc), "%s/proc", test_dir);
    assert_int_equal(mkdir(f->proc, 0755), 0);
    char path[160];
    snprintf(path, sizeof(path), "%s/mnt_ns", f->proc);
    put(path, "", 0);
    snprintf(path, sizeof(path), "%s/self", f->proc);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/self/ns", f->proc);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/self/ns/mnt", f->proc);
    assert_int_equal(symlink("../../mnt_ns", path), 0);
    f->hz = sysconf(_SC_CLK_TCK);
    f->clock.boot = BOOT_SEC * 1000000ULL;
    environment_host(&f->env);
    f->env.proc = f->proc;
    f->env.realtime = fake_realtime;
    f->env.boottime = fake_boottime;
    f->env.clock = &f->clock;
    f->policy.violation_cpu = 1.0;  /* users at 0.5 cores and above get a closer look */
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    if (!f)
        return 0;
    snapshot_free(&f->snap);
    remove_test_dir();
    free(f);
    return 0;
}

static void start(struct fixture *f)
{
    struct counter_roots proc_only = {0};
    struct sampler_scope scope = {
        .min_uid = 1000,
        .followed_classes = 1u << CLASS_COMPUTE | 1u << CLASS_FORBIDDEN,
        .sample_interval = 2000000,
        .scan_interval = 30000000,
        .judge = &fake_judge,
    };
    assert_int_equal(sampler_init(&f->sampler, &f->env, &proc_only, &scope), 0);
}

static void sample_after(struct fixture *f, uint64_t seconds)
{
    f->clock.boot += seconds * 1000000;
    observe(&f->sampler, &f->policy, &f->snap, NULL);
}

static const struct proc_sample *find_proc(const struct snapshot *s, pid_t pid)
{
    for (size_t i = 0; i < s->proc_count; i++)
        if (s->procs[i].pid == pid)
            return &s->procs[i];
    return NULL;
}

#define SKIP_UNLESS_ROOT(state)                                                                    \
    do {                                                                                           \
        if (!*(state))                                                                             \
            skip();                                                                                \
    } while (0)

/* Three users' processes, two with names built to fool a parser: each
 * user's CPU, memory and tasks are theirs, the busy user's processes are
 * reported with their names byte for byte, root's are not counted. */
static void test_users_and_hostile_names(void **state)
{
    SKIP_UNLESS_ROOT(state);
    struct fixture *f = *state;
    long page = sysconf(_SC_PAGESIZE);
    add_proc(f, 1, 0, "init", 1, 100);
    add_proc(f, 4001, 2001, "a) R 1 2 (x", 3, 1000);
    add_proc(f, 4002, 2001, "new\nline", 1, 500);
    add_proc(f, 4003, 2002, "sp ace ( )", 1, 10);
    start(f);
    sample_after(f, 0);
    /* In 2 s, user 2001's first process uses 2 s of CPU: one core. */
    put_stat(f, 4001, "a) R 1 2 (x", 2 * (uint64_t)f->hz, 3, 100 * (uint64_t)f->hz, 1000);
    sample_after(f, 2);

    assert_null(snapshot_find_user(&f->snap, 0));
    const struct user_sample *busy = snapshot_find_user(&f->snap, 2001);
    const struct user_sample *idle = snapshot_find_user(&f->snap, 2002);
    assert_non_null(busy);
    assert_non_null(idle);
    assert_true(busy->cpu > 0.99 && busy->cpu < 1.01);
    assert_int_equal(busy->memory, 1500 * (uint64_t)page);
    assert_int_equal(busy->tasks, 4);
    assert_true(busy->detailed);
    assert_true(idle->cpu == 0);
    assert_int_equal(idle->memory, 10 * (uint64_t)page);
    assert_false(idle->detailed);

    const struct proc_sample *hostile = find_proc(&f->snap, 4001);
    assert_non_null(hostile);
    assert_string_equal(hostile->comm, "a) R 1 2 (x");
    assert_int_equal(hostile->uid, 2001);
    assert_true(hostile->cpu > 0.99 && hostile->cpu < 1.01);
    assert_int_equal(hostile->rss, 1000 * (uint64_t)page);
    assert_string_equal(hostile->exe, "/usr/bin/prog");
    const struct proc_sample *newline = find_proc(&f->snap, 4002);
    assert_non_null(newline);
    assert_string_equal(newline->comm, "new\nline");
    assert_null(find_proc(&f->snap, 4003)); /* an idle user's are not looked at */
    sampler_free(&f->sampler);
}

/* A pid listed in /proc whose files are gone by the time they are read,
 * and one whose stat does not parse: neither is reported, and nothing
 * else is lost with them. */
static void test_vanished_and_unparsable(void **state)
{
    SKIP_UNLESS_ROOT(state);
    struct fixture *f = *state;
    add_proc(f, 4101, 2101, "fine", 1, 7);
    char path[256];
    proc_path(f, path, sizeof(path), 4102, NULL);
    assert_int_equal(mkdir(path, 0555), 0);         /* listed, but nothing to read */
    assert_int_equal(chown(path, 2102, 2102), 0);
    add_proc(f, 4103, 2103, "broken", 1, 7);
    proc_path(f, path, sizeof(path), 4103, "stat");
    put(path, "4103 (broken S 1 2", 18);            /* no closing parenthesis */
    start(f);
    sample_after(f, 0);
    sample_after(f, 2);
    assert_non_null(snapshot_find_user(&f->snap, 2101));
    assert_null(snapshot_find_user(&f->snap, 2102));
    assert_null(snapshot_find_user(&f->snap, 2103));

    /* Gone between two samples: its user is no longer there. */
    remove_proc(f, 4101);
    sample_after(f, 2);
    assert_null(snapshot_find_user(&f->snap, 2101));
    sampler_free(&f->sampler);
}

/* A process that takes a user's uid after it started (sshd's session
 * child, su): seen as root's at first, as the user's once it changed. */
static void test_uid_change(void **state)
{
    SKIP_UNLESS_ROOT(state);
    struct fixture *f = *state;
    char path[256];
    proc_path(f, path, sizeof(path), 4201, NULL);
    assert_int_equal(mkdir(path, 0555), 0);
    /* Started a second before the first sample: young. */
    uint64_t born = (BOOT_SEC - 1) * (uint64_t)f->hz;
    put_stat(f, 4201, "sshd", 0, 1, born, 50);
    start(f);
    sample_after(f, 0);
    assert_null(snapshot_find_user(&f->snap, 2201));
    assert_int_equal(chown(path, 2201, 2201), 0);
    put_stat(f, 4201, "bash", 0, 1, born, 60);
    sample_after(f, 2);
    const struct user_sample *u = snapshot_find_user(&f->snap, 2201);
    assert_non_null(u);
    assert_int_equal(u->tasks, 1);
    assert_int_equal(u->memory, 60 * (uint64_t)sysconf(_SC_PAGESIZE));
    sampler_free(&f->sampler);
}

/* A pid reused by another process between two samples (another start
 * time): the new one is read afresh, not taken for the old. */
static void test_pid_reused(void **state)
{
    SKIP_UNLESS_ROOT(state);
    struct fixture *f = *state;
    add_proc(f, 4301, 2301, "first", 1, 5);
    start(f);
    sample_after(f, 0);
    assert_non_null(snapshot_find_user(&f->snap, 2301));
    remove_proc(f, 4301);
    add_proc(f, 4301, 2302, "second", 1, 9);
    put_stat(f, 4301, "second", 0, 1, 200 * (uint64_t)f->hz, 9);
    sample_after(f, 2);
    assert_null(snapshot_find_user(&f->snap, 2301));
    const struct user_sample *u = snapshot_find_user(&f->snap, 2302);
    assert_non_null(u);
    assert_int_equal(u->memory, 9 * (uint64_t)sysconf(_SC_PAGESIZE));
    sampler_free(&f->sampler);
}

/* What the judge makes of the processes: a forbidden program of an idle
 * user is reported with its rule and the part of the rule that matched;
 * a busy user's exempt programs' usage is known, and only theirs. */
static void test_classes_and_exempt_usage(void **state)
{
    SKIP_UNLESS_ROOT(state);
    struct fixture *f = *state;
    add_proc(f, 4401, 2401, "xmrig", 1, 5);
    add_proc(f, 4402, 2402, "sshd", 1, 30);
    set_exe(f, 4402, "/usr/sbin/sshd");
    add_proc(f, 4403, 2402, "work", 1, 70);
    start(f);
    sample_after(f, 0);
    /* In 2 s: sshd 0.5 s of CPU, work 1 s. */
    put_stat(f, 4402, "sshd", (uint64_t)f->hz / 2, 1, 100 * (uint64_t)f->hz, 30);
    put_stat(f, 4403, "work", (uint64_t)f->hz, 1, 100 * (uint64_t)f->hz, 70);
    sample_after(f, 2);

    const struct proc_sample *miner = find_proc(&f->snap, 4401);
    assert_non_null(miner);
    assert_int_equal(miner->class, CLASS_FORBIDDEN);
    assert_string_equal(miner->rule, "miner");
    assert_int_equal(miner->rule_parts, RULE_PART_COMM);
    assert_false(snapshot_find_user(&f->snap, 2401)->detailed);

    const struct user_sample *u = snapshot_find_user(&f->snap, 2402);
    long page = sysconf(_SC_PAGESIZE);
    assert_true(u->detailed);
    assert_true(u->cpu > 0.74 && u->cpu < 0.76);
    assert_true(u->exempt_cpu > 0.24 && u->exempt_cpu < 0.26);
    assert_int_equal(u->exempt_memory, 30 * (uint64_t)page);
    assert_int_equal(find_proc(&f->snap, 4402)->class, CLASS_EXEMPT);
    assert_int_equal(find_proc(&f->snap, 4402)->rule_parts, RULE_PART_EXE);
    assert_int_equal(find_proc(&f->snap, 4403)->class, CLASS_NONE);
    assert_null(find_proc(&f->snap, 4403)->rule);
    sampler_free(&f->sampler);
}

static uint32_t job_of(const struct fixture *f, pid_t pid)
{
    struct proc_sample ps;
    assert_true(sampler_proc(&f->sampler, pid, 100 * (uint64_t)f->hz, &ps));
    free(ps.exe);
    free(ps.foreign_code);
    return ps.slurm_job;
}

/* Processes in a Slurm job's cgroup (v1's and v2's shapes) are Slurm's:
 * their usage is not their user's, a forbidden name among them is not
 * reported, and what they use is shown apart once a sweep has read them.
 * A cgroup of the user's own named like Slurm's is the user's. */
static void test_slurm_job_by_cgroup(void **state)
{
    SKIP_UNLESS_ROOT(state);
    struct fixture *f = *state;
    long page = sysconf(_SC_PAGESIZE);
    uint64_t born = 100 * (uint64_t)f->hz;
    add_proc(f, 4501, 2501, "sim", 1, 300);
    static const char v1[] = "5:freezer:/slurm/uid_2501/job_77/step_0\n0::/user.slice\n";
    put_file(f, 4501, "cgroup", v1, sizeof(v1) - 1);
    add_proc(f, 4502, 2501, "xmrig", 1, 20);
    static const char v2[] = "0::/system.slice/slurmstepd.scope/job_77/step_0/user/task_0\n";
    put_file(f, 4502, "cgroup", v2, sizeof(v2) - 1);
    add_proc(f, 4503, 2501, "work", 1, 100);
    static const char own[] = "0::/user.slice/user-2501.slice/user@2501.service/app.slice/"
                              "slurmstepd.scope/job_77\n";
    put_file(f, 4503, "cgroup", own, sizeof(own) - 1);
    start(f);
    sample_after(f, 0);
    /* In 2 s: sim 2 s of CPU, xmrig 1 s, work 1 s. */
    put_stat(f, 4501, "sim", 2 * (uint64_t)f->hz, 1, born, 300);
    put_stat(f, 4502, "xmrig", (uint64_t)f->hz, 1, born, 20);
    put_stat(f, 4503, "work", (uint64_t)f->hz, 1, born, 100);
    sample_after(f, 2);

    const struct user_sample *u = snapshot_find_user(&f->snap, 2501);
    assert_non_null(u);
    assert_true(u->cpu > 0.49 && u->cpu < 0.51);
    assert_int_equal(u->memory, 100 * (uint64_t)page);
    assert_int_equal(u->tasks, 1);
    assert_true(u->detailed);
    assert_non_null(find_proc(&f->snap, 4503));
    assert_null(find_proc(&f->snap, 4501));
    assert_null(find_proc(&f->snap, 4502)); /* forbidden by name, but Slurm's */
    assert_int_equal(job_of(f, 4501), 77);
    assert_int_equal(job_of(f, 4502), 77);
    assert_int_equal(job_of(f, 4503), 0);

    /* A sweep reads the job's processes: their figures, apart. */
    sampler_sweep(&f->sampler);
    sample_after(f, 2);
    u = snapshot_find_user(&f->snap, 2501);
    assert_int_equal(u->slurm_jobs, 1);
    assert_true(u->slurm_cpu > 1.49 && u->slurm_cpu < 1.51);
    assert_int_equal(u->slurm_memory, 320 * (uint64_t)page);
    assert_int_equal(u->memory, 100 * (uint64_t)page);
    sampler_free(&f->sampler);
}

/* A root process named slurmstepd, of root's file, with root's every uid. */
static void add_stepd(const struct fixture *f, int pid, uid_t dir_uid, const char *uids,
                      const char *exe, const char *title)
{
    add_proc(f, pid, dir_uid, "slurmstepd", 1, 10);
    set_exe(f, pid, exe);
    char status[256];
    int n = snprintf(status, sizeof(status),
                     "Name:\tslurmstepd\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t%d\n"
                     "Ngid:\t0\nPid:\t%d\nPPid:\t1\nTracerPid:\t0\nUid:\t%s\nGid:\t0\t0\t0\t0\n",
                     pid, pid, uids);
    put_file(f, pid, "status", status, (size_t)n);
    put_file(f, pid, "cmdline", title, strlen(title) + 1);
}

/* A process of the user's under ppid. */
static void add_child(const struct fixture *f, int pid, int ppid, uid_t uid, const char *comm)
{
    add_proc(f, pid, uid, comm, 1, 50);
    put_stat_of(f, pid, ppid, comm, 0, 1, 100 * (uint64_t)f->hz, 50);
}

/* Where Slurm keeps no job cgroups (proctrack/linuxproc): the child of
 * root's slurmstepd is the job's, and so is its child; a program a user
 * names slurmstepd, root's setuid program renamed so, or a slurmstepd
 * that runs a file a user may write, is no step daemon.  A job's process
 * that outlives its parent (reparented) is the user's again. */
static void test_slurm_job_by_tree(void **state)
{
    SKIP_UNLESS_ROOT(state);
    struct fixture *f = *state;
    char roots[160], users[160];
    snprintf(roots, sizeof(roots), "%s/slurmstepd", test_dir);
    snprintf(users, sizeof(users), "%s/own-slurmstepd", test_dir);
    put(roots, "", 0);
    put(users, "", 0);
    assert_int_equal(chmod(roots, 0755), 0);
    assert_int_equal(chmod(users, 0755), 0);
    assert_int_equal(chown(users, 2601, 2601), 0);
    add_proc(f, 1, 0, "init", 1, 100);
    add_stepd(f, 4601, 0, "0\t0\t0\t0", roots, "slurmstepd: [88.0]");
    add_child(f, 4602, 4601, 2601, "bash");
    add_child(f, 4603, 4602, 2601, "sim");
    add_child(f, 4605, 4603, 2601, "sim"); /* a chain the table holds out of order */
    add_child(f, 4604, 4605, 2601, "sim");
    add_stepd(f, 4611, 2601, "2601\t2601\t2601\t2601", roots, "slurmstepd: [89.0]");
    add_child(f, 4612, 4611, 2601, "sim");
    add_stepd(f, 4621, 0, "2601\t0\t0\t0", roots, "slurmstepd: [90.0]");
    add_child(f, 4622, 4621, 2601, "sim");
    add_stepd(f, 4631, 0, "0\t0\t0\t0", users, "slurmstepd: [91.0]");
    add_child(f, 4632, 4631, 2601, "sim");
    add_stepd(f, 4641, 0, "0\t0\t0\t0", roots, "slurmstepd");
    add_child(f, 4642, 4641, 2601, "sim");
    start(f);
    sample_after(f, 0);
    sampler_sweep(&f->sampler); /* a child listed before its parent is placed here */
    sample_after(f, 2);
    assert_int_equal(job_of(f, 4602), 88);
    assert_int_equal(job_of(f, 4603), 88);
    assert_int_equal(job_of(f, 4605), 88);
    assert_int_equal(job_of(f, 4604), 88);
    assert_int_equal(job_of(f, 4612), 0);
    assert_int_equal(job_of(f, 4622), 0);
    assert_int_equal(job_of(f, 4632), 0);
    assert_int_equal(job_of(f, 4642), SLURM_JOB_UNKNOWN); /* a title without its job */
    const struct user_sample *u = snapshot_find_user(&f->snap, 2601);
    long page = sysconf(_SC_PAGESIZE);
    assert_int_equal(u->tasks, 4); /* 4611's own, 4612, 4622, 4632 */
    assert_int_equal(u->slurm_jobs, 2);
    assert_int_equal(u->slurm_memory, 250 * (uint64_t)page);

    /* 4602 ends; 4603 is reparented to init: Slurm's no longer, and
     * neither is what it started, at the same sweep. */
    remove_proc(f, 4602);
    put_stat_of(f, 4603, 1, "sim", 0, 1, 100 * (uint64_t)f->hz, 50);
    sampler_sweep(&f->sampler);
    sample_after(f, 2);
    assert_int_equal(job_of(f, 4603), 0);
    assert_int_equal(job_of(f, 4605), 0);
    assert_int_equal(job_of(f, 4604), 0);
    u = snapshot_find_user(&f->snap, 2601);
    assert_int_equal(u->tasks, 7);
    assert_int_equal(u->slurm_jobs, 1);
    sampler_free(&f->sampler);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_users_and_hostile_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vanished_and_unparsable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_uid_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pid_reused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_classes_and_exempt_usage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slurm_job_by_cgroup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slurm_job_by_tree, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
