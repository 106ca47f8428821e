"""Processes of a Slurm job on the node are Slurm's (issue: Slurm for
real): the daemon does not judge them, count them for their user, stop
them or move them into its own cgroups; why says which job they are
part of, and status shows them apart.  A busy loop of the same user's
outside the job is judged as ever.

There is no Slurm here: the tests make what the daemon reads of one.
Where Slurm tracks jobs by their processes (proctrack/linuxproc), a
job's task is a child of root's slurmstepd: here a root-owned copy of
the shell under that name, whose title is slurmstepd's, starts a busy
loop as the test user.  Where Slurm's cgroup/v1 plugin runs, a job's
processes are in /slurm/uid_U/job_N at the root of a hierarchy: test
cgroups go only below this test run's own cgroup (DESIGN.md), so that
test runs only where the run's freezer cgroup is the hierarchy's root
(as on this machine), and is skipped elsewhere; the unit tests
(test_slurm_job, test_sampler) cover both cgroup layouts."""

import json
import os
import shutil
import subprocess

import lgtest
from lgtest import wait_for

SAMPLE = 0.5
WINDOW = 2.0
CPU = 0.5      # cores, [violation] cpu (spin 2 gets twice that on a busy node)
HANG = lgtest.HANG
STEPD_JOB = 4343
CGROUP_JOB = 4444
SETPRIV = shutil.which("setpriv") or "/usr/bin/setpriv"


def parent_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def child_of(ppid, comm, uid):
    """The pid of ppid's child named comm running as uid, or None."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if parent_of(int(entry)) == ppid and lgtest.process_uid(int(entry), comm) == uid:
                    return int(entry)
            except (FileNotFoundError, ProcessLookupError, IndexError):
                pass
    return None


def cgroup_of(pid, controller):
    """pid's cgroup in a v1 hierarchy."""
    with open(f"/proc/{pid}/cgroup") as f:
        for line in f:
            _, names, path = line.rstrip("\n").split(":", 2)
            if controller in names.split(","):
                return path
    return None


class Base(lgtest.DaemonTestCase):
    """A daemon on a short window, and the tests' helpers.  A class
    gives daemon_keys(): the [daemon] keys (enforcing(), observing())."""

    @classmethod
    def daemon_keys(cls):
        raise NotImplementedError

    @classmethod
    def policy(cls):
        return lgtest.policy(cls.daemon_keys(), violation=lgtest.violation(CPU, WINDOW),
                             levels=[lgtest.throttled(0.25)])

    @classmethod
    def prepare(cls):
        cls.ctl_bin = lgtest.private_copy(lgtest.CTL, cls.workdir, "loginguardctl")
        # Root's file, as slurmd's is: the shell under slurmstepd's name.
        cls.stepd = lgtest.private_copy("/bin/sh", cls.workdir, "slurmstepd")

    def ctl_json(self, *args):
        p = subprocess.run([self.ctl_bin, "--socket", f"{self.workdir}/control.sock", "--json",
                            *args], capture_output=True, text=True, timeout=HANG, cwd="/")
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def why(self, pid):
        return self.ctl_json("why", str(pid))["why"]

    def why_when(self, pid, verdict, text=None):
        """why pid once its verdict (and text, if given) is the one
        expected: the daemon has sampled the process (and the user
        directory named its owner); the last answer is in the failure."""
        last = {}

        def answered():
            last["why"] = w = self.why(pid)
            return w if w["verdict"] == verdict and text in (None, w["text"]) else None
        try:
            return wait_for(answered, HANG, f"verdict {verdict} for pid {pid}")
        except AssertionError as e:
            raise AssertionError(f"{e}; the last answer: {last.get('why')}") from None

    def row(self, uid):
        """uid's row in status --all, or None."""
        users = self.ctl_json("status", "--all")["users"]
        return next((u for u in users if u["uid"] == uid), None)

    def start(self, argv, executable=None, user=None, join=None):
        """argv (run as executable) in a process group of its own, as user
        (root's if None), after join() as root; ended with the test's
        processes (Processes.stop_all)."""
        def become():
            os.setsid()
            if join:
                join()
            if user is not None:
                os.setgroups([])
                os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
                os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
        p = subprocess.Popen(argv, executable=executable, preexec_fn=become,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, cwd="/")
        self.procs.procs.append(p)
        if user is not None:
            self.procs.uids.add(user.pw_uid)
        return p

    def start_under_stepd(self, user, title, stepd_user=None):
        """spin 2 as user, a child of the shell named slurmstepd, titled
        title as slurmstepd titles itself; the stepd is root's (it becomes
        user for the child, as slurmstepd does), or stepd_user's.  The
        spin's pid."""
        become = f"{SETPRIV} --reuid={user.pw_uid} --regid={user.pw_gid} --clear-groups "
        script = f"{'' if stepd_user else become}{self.spin} 2 & wait"
        stepd = self.start([title, "-c", script], executable=self.stepd, user=stepd_user)
        self.procs.uids.add(user.pw_uid)
        return wait_for(lambda: child_of(stepd.pid, "spin", user.pw_uid), HANG,
                        "the spin below slurmstepd")

    def assert_slurms(self, pid, user, job):
        """pid is known for job's: why says so, and once a sweep has read
        it its user's row shows it apart, busier than a violation (so that
        it would be one if it counted)."""
        w = self.why_when(pid, "job", [f"part of Slurm job {job}: Slurm limits it; it is not "
                                       f"judged here and does not count toward "
                                       f"{user.pw_name}'s usage"])
        self.assertEqual(w["process"]["slurm_job"], job)
        wait_for(lambda: (self.row(user.pw_uid) or {}).get("slurm_cpu_cores", 0) > CPU, HANG,
                 f"{user.pw_name}'s Slurm job busier than {CPU} cores in status")
        row = self.row(user.pw_uid)
        self.assertEqual(row["slurm_jobs"], 1)
        # Nothing else of the user's runs: their own usage is idle.
        self.assertLess(row["cpu_cores"], CPU)

    def assert_never_judged(self, user):
        """A whole window and more of samples: no violation for user."""
        self.daemon.wait_samples(int(2 * WINDOW / SAMPLE) + 2)
        self.assertEqual(self.daemon.find(event="violation", uid=user.pw_uid), [])

    def assert_outside_judged(self, user, job_pid):
        """The same user's busy loop outside the job is judged; the job's
        is none of the violation's processes."""
        mark = self.daemon.mark()
        own = self.procs.start([self.spin, "2"], user)
        event = self.daemon.wait_event(WINDOW + HANG, after=mark, event="violation",
                                       uid=user.pw_uid)
        pids = [p["pid"] for p in event["processes"]]
        self.assertIn(own.pid, pids)
        self.assertNotIn(job_pid, pids)
        self.assertEqual(self.why(job_pid)["verdict"], "job")
        return own


class StepdJobs(Base):
    """Enforce mode, the cgroupfs backend (per-user counters): a job's
    process outside its user's cgroup is no stray to move."""

    @classmethod
    def daemon_keys(cls):
        return lgtest.enforcing(cls.parent, cls.workdir, sample_interval=f"{SAMPLE:g}s")

    def user_cgroup(self, uid):
        return os.path.join(lgtest.own_cgroup("cpu"), self.parent, f"user-{uid}")

    def test_a_task_of_roots_slurmstepd_is_slurms(self):
        user = self.users.add("lgtest60")
        task = self.start_under_stepd(user, f"slurmstepd: [{STEPD_JOB}.0]")
        before = cgroup_of(task, "cpu")
        self.assert_slurms(task, user, STEPD_JOB)
        self.assert_never_judged(user)
        # Swept more than once: where Slurm's tracking left it.
        self.assertEqual(cgroup_of(task, "cpu"), before)
        own = self.assert_outside_judged(user, task)
        # The user's own is moved into their cgroup; the job's is not.
        wait_for(lambda: cgroup_of(own.pid, "cpu") == self.user_cgroup(user.pw_uid), HANG,
                 "the user's own busy loop in their cgroup")
        self.assertEqual(cgroup_of(task, "cpu"), before)

    def test_a_program_a_user_names_slurmstepd_is_theirs(self):
        user = self.users.add("lgtest61")
        task = self.start_under_stepd(user, "slurmstepd: [4545.0]", stepd_user=user)
        event = self.daemon.wait_event(WINDOW + HANG, event="violation", uid=user.pw_uid)
        self.assertIn(task, [p["pid"] for p in event["processes"]])
        self.assertNotEqual(self.why(task)["verdict"], "job")
        wait_for(lambda: cgroup_of(task, "cpu") == self.user_cgroup(user.pw_uid), HANG,
                 "the busy loop in its user's cgroup")


class CgroupJobs(Base):
    """Enforce mode: a process in a job's cgroup of Slurm's v1 layout."""

    @classmethod
    def daemon_keys(cls):
        return lgtest.enforcing(cls.parent, cls.workdir, sample_interval=f"{SAMPLE:g}s")

    def job_cgroup(self, uid, job):
        """/slurm/uid_U/job_N of the freezer hierarchy (Slurm's
        proctrack/cgroup uses it), made for the test and removed after."""
        own = lgtest.own_cgroup("freezer")
        root = "/sys/fs/cgroup/freezer"
        if own != "/" or not os.path.isdir(root):
            self.skipTest("Slurm's v1 layout starts at a hierarchy's root, and this run's "
                          "freezer cgroup is not there (test cgroups go only below it)")
        top = f"{root}/slurm"
        if os.path.exists(top):
            self.skipTest(f"{top} exists: another Slurm's, not the test's to use")
        path = f"{top}/uid_{uid}/job_{job}"
        os.makedirs(path)

        def remove():
            wait_for(lambda: not lgtest.read(f"{path}/cgroup.procs").strip(), HANG,
                     f"{path} to empty")
            for d in (path, os.path.dirname(path), top):
                os.rmdir(d)
        self.addCleanup(remove)
        return path

    def test_a_process_in_a_jobs_cgroup_is_slurms(self):
        user = self.users.add("lgtest62")
        job = self.job_cgroup(user.pw_uid, CGROUP_JOB)

        def join():
            with open(f"{job}/cgroup.procs", "w") as f:
                f.write(str(os.getpid()))
        task = self.start([self.spin, "2"], user=user, join=join).pid
        self.assertEqual(cgroup_of(task, "freezer"), f"/slurm/uid_{user.pw_uid}/job_{CGROUP_JOB}")
        before = cgroup_of(task, "cpu")
        self.assert_slurms(task, user, CGROUP_JOB)
        self.assert_never_judged(user)
        self.assertEqual(cgroup_of(task, "cpu"), before)
        self.assert_outside_judged(user, task)
        self.assertEqual(cgroup_of(task, "cpu"), before)


class ProcJobs(Base):
    """Observe mode, usage summed from /proc: a job's process adds
    nothing to its user's."""

    @classmethod
    def daemon_keys(cls):
        return lgtest.observing(workdir=cls.workdir, sample_interval=f"{SAMPLE:g}s")

    def test_a_task_of_roots_slurmstepd_is_slurms(self):
        user = self.users.add("lgtest63")
        task = self.start_under_stepd(user, f"slurmstepd: [{STEPD_JOB}.batch]")
        self.assert_slurms(task, user, STEPD_JOB)
        self.assert_never_judged(user)
        self.assert_outside_judged(user, task)


if __name__ == "__main__":
    lgtest.run_tests()
