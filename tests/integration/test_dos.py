"""Stalling or confusing the daemon, done for real: a second instance
that would fight the first over the same cgroups, processes that rename
themselves all the time with long hostile command lines, a user whose
session bus and mail never answer, and a user whose thousands of
processes, live or zombie, would use up the daemon's descriptors."""

import os
import shutil
import signal
import socket
import subprocess

import lgtest
from lgtest import Daemon, wait_for

SAMPLE = 0.5
HANG = lgtest.HANG


def policy(parent, workdir, rules_dirs=None, state_dir=None):
    keys = {"sample_interval": f"{SAMPLE:g}s"}
    if rules_dirs:
        keys["rules_dirs"] = rules_dirs
    if state_dir:
        keys["state_dir"] = state_dir
    return lgtest.policy(lgtest.enforcing(parent, workdir, **keys), notify={"channels": ""})


def run_second(conf):
    """A second loginguardd on conf, in the foreground: (exit status, stderr)."""
    p = subprocess.run([lgtest.DAEMON, "--foreground", "--config", conf],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=HANG)
    return p.returncode, p.stderr


class OneInstance(lgtest.DaemonTestCase):
    @classmethod
    def policy(cls):
        return policy(cls.parent, cls.workdir)

    def test_a_second_daemon_on_the_same_state_refuses_to_start(self):
        code, err = run_second(self.daemon.conf)
        self.assertEqual(code, 1)
        self.assertIn(f"another loginguardd (pid {self.daemon.proc.pid})", err)
        self.assertIn("state directory", err)
        self.assertIsNone(self.daemon.proc.poll(), "the first daemon was disturbed")

    def test_a_second_daemon_on_the_same_cgroups_refuses_to_start(self):
        fixture = lgtest.Fixture("second", users=False)
        self.addCleanup(fixture.close)
        other = fixture.workdir
        os.makedirs(f"{other}/rules.d")
        second = Daemon(other, policy(self.parent, other, state_dir=f"{other}/state"))
        code, err = run_second(second.conf)
        self.assertEqual(code, 1)
        self.assertIn(f"another loginguardd (pid {self.daemon.proc.pid})", err)
        self.assertIn("cgroups", err)
        self.assertIsNone(self.daemon.proc.poll(), "the first daemon was disturbed")


def hostile_argv():
    """36 KiB of arguments on which glibc's regexec is quadratic for a
    shipped rule (python-training-script), about 0.3 s a match."""
    return ["_train" * 6000]


class RenameStorm(lgtest.DaemonTestCase):
    """Processes that rename themselves four times a second, with long
    hostile command lines, must not keep the daemon from anyone else.
    (How soon another user's forbidden program is stopped during the
    storm: make bench prints it.)"""

    @classmethod
    def policy(cls):
        return policy(cls.parent, cls.workdir,
                      rules_dirs=f"{cls.workdir}/rules.d, {lgtest.SHIPPED_RULES}")

    @classmethod
    def daemon_rules(cls):
        return [{"name": "test-miner", "class": "forbidden", "comm": "lgminer"}]

    def test_a_forbidden_program_is_stopped_during_a_rename_storm(self):
        storm = self.users.add("lgtest31")
        other = self.users.add("lgtest32")
        renamer = lgtest.private_copy(os.path.join(lgtest.TOP_BUILDDIR, "tests", "helpers",
                                                   "renamer"), self.workdir, "renamer")
        storm_pids = [self.procs.start([renamer, "250", "python3", "python3x"] + hostile_argv(),
                                       storm).pid for _ in range(10)]
        lgtest.wait_for(lambda: all(lgtest.read(f"/proc/{p}/comm").strip() == "python3x"
                                    for p in storm_pids), HANG, "the storm to be under way")
        # The daemon has seen the storm: two samples since it began.
        self.daemon.wait_samples(2)
        miner = lgtest.private_copy(lgtest.SPIN, self.workdir, "lgminer")
        proc = self.procs.start([miner, "1", "0.05"], other)
        stopping = self.daemon.wait_event(HANG, event="process_stopping", uid=other.pw_uid)
        self.assertEqual(stopping["process"]["pid"], proc.pid)
        self.assertEqual(proc.wait(HANG), -15)
        # The storm goes on, and so does the daemon.
        self.assertTrue(all(lgtest.alive(p) for p in storm_pids))
        self.assertIsNone(self.daemon.proc.poll())


class HungNotices(lgtest.DaemonTestCase):
    """A user whose session bus accepts and never answers, on a node whose
    mail system hangs: every notice to them starts two children that hang
    until they are killed at 2 s.  Nobody's sample waits for them.  (How
    soon another user's forbidden program is stopped meanwhile: make bench
    prints it.)"""

    @classmethod
    def policy(cls):
        # events_per_user 0: all of the hung user's events are in the log
        # (a program stopped every 0.3 s, and the notices), however long
        # the test takes on a busy machine.
        return lgtest.policy(lgtest.enforcing(cls.parent, cls.workdir,
                                              sample_interval=f"{SAMPLE:g}s", events_per_user=0),
                             notify={"channels": "desktop, email",
                                     "sendmail": f"{cls.workdir}/hung-sendmail -i -t",
                                     "rate_limit": "0s"})

    @classmethod
    def daemon_rules(cls):
        return [{"name": "test-miner", "class": "forbidden", "comm": "lgminer"}]

    @classmethod
    def prepare(cls):
        with open(f"{cls.workdir}/hung-sendmail", "w") as f:
            f.write("#!/bin/sh\nexec sleep 600\n")
        os.chmod(f"{cls.workdir}/hung-sendmail", 0o755)

    def hung_bus(self, user):
        """/run/user/UID/bus of user: a socket that takes connections into
        its backlog and never answers.  (This host's systemd does not run
        as pid 1, so no one else makes /run/user/UID here; test uids are
        far above any real user's.)"""
        runtime = f"/run/user/{user.pw_uid}"
        os.makedirs(runtime, 0o700)
        os.chown(runtime, user.pw_uid, user.pw_gid)
        self.addCleanup(shutil.rmtree, runtime, ignore_errors=True)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.addCleanup(listener.close)
        listener.bind(f"{runtime}/bus")
        os.chown(f"{runtime}/bus", user.pw_uid, user.pw_gid)
        listener.listen(64)

    def samples_between_notices(self, mark, user):
        """The most samples (told apart by their time, which every decision
        of a sample shares) with decisions about user's programs that the
        log has after mark (when no notice to user was under way) and
        before the end of a desktop notice to user, after the end of the
        last one."""
        most, times = 0, set()
        for e in self.daemon.find(mark, uid=user.pw_uid):
            if e["event"] == "notice" and e["channel"] == "desktop":
                most = max(most, len(times))
                times = set()
            elif e["event"] == "forbidden_process":
                times.add(e["time"])
        return most

    def test_hung_bus_and_mail_delay_no_one(self):
        hung = self.users.add("lgtest33")
        other = self.users.add("lgtest34")
        self.hung_bus(hung)
        miner = lgtest.private_copy(lgtest.SPIN, self.workdir, "lgminer")
        mark = self.daemon.mark()
        # A new forbidden program every 0.3 s: a notice to hung (two
        # children that hang) whenever none is under way.
        loop = self.procs.start(["/bin/sh", "-c", f"while :; do {miner} 1 0.05 & sleep 0.3; done"],
                                hung)
        self.daemon.wait_event(HANG, after=mark, event="notice", uid=hung.pw_uid,
                               channel="desktop")
        proc = self.procs.start([miner, "1", "0.05"], other)
        stopping = self.daemon.wait_event(HANG, after=mark, event="process_stopping",
                                          uid=other.pw_uid)
        self.assertEqual(stopping["process"]["pid"], proc.pid)
        # The samples go on while a notice hangs: before the first of hung's
        # desktop notices ends, or between the ends of two (a notice starts
        # at the first sample with a decision about hung while none is under
        # way, and hangs until its deadline), the daemon judged hung's
        # programs in more than one sample.  A sample that waited for the
        # notice would be the only one.
        wait_for(lambda: self.samples_between_notices(mark, hung) >= 2, HANG,
                 "two samples while a notice hung")
        loop.kill()
        # Each hung child was killed at its deadline, and said so.
        desktop = self.daemon.find(mark, event="notice", uid=hung.pw_uid, channel="desktop")[0]
        self.assertEqual(desktop["outcome"], "failed")
        self.assertIn("took more than 2000 ms and was stopped", desktop["message"])
        email = self.daemon.wait_event(HANG, after=mark, event="notice", uid=hung.pw_uid,
                                       channel="email")
        self.assertEqual(email["outcome"], "failed")
        self.assertIn("did not finish within 2000 ms", email["message"])


# N processes of the user who runs it, each asleep or ended at once (a
# zombie its parent never reaps).  On SIGTERM the parent ends and reaps
# them all, so none is left to an init that may be slow to.
FARM = r"""
import os, signal, sys, time
n, zombies = int(sys.argv[1]), sys.argv[2] == "zombies"
kids = []
for _ in range(n):
    pid = os.fork()
    if pid == 0:
        if not zombies:
            time.sleep(600)
        os._exit(0)
    kids.append(pid)
def end(*_):
    for pid in kids:
        os.kill(pid, signal.SIGKILL)
    for pid in kids:
        os.waitpid(pid, 0)
    os._exit(0)
signal.signal(signal.SIGTERM, end)
while True:
    time.sleep(600)
"""


def process_count(uid):
    """uid's processes in /proc, zombies too."""
    n = 0
    for entry in os.listdir("/proc"):
        try:
            n += entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid
        except FileNotFoundError:
            pass
    return n


class DescriptorFarm(lgtest.DaemonTestCase):
    """One user's 1,700 processes against a daemon whose open-file limit
    is 1,500: another user's busy loop is still seen and flagged.  A zombie
    holds no descriptor; live processes past the cap are read by path, and
    the daemon says so (descriptors_capped)."""
    LIMIT = 1500
    FARM = 1700
    SCAN = 2.0
    mode = "observe"

    @classmethod
    def policy(cls):
        return lgtest.policy(lgtest.enforcing(cls.parent, cls.workdir,
                                              sample_interval=f"{SAMPLE:g}s",
                                              scan_interval=f"{cls.SCAN:g}s", mode=cls.mode),
                             share={"tasks": 4096}, violation=lgtest.violation(0.5, 2),
                             notify={"channels": ""})

    @classmethod
    def make_daemon(cls):
        return Daemon(cls.workdir, cls.policy(),
                      wrapper=["prlimit", f"--nofile={cls.LIMIT}:{cls.LIMIT}", "--"])

    def farm(self, kind, farmer):
        """The farm, once a sweep has found all of it (the connector
        forgets a zombie at its exit; a sweep finds it again).  It ends,
        reaping its children, when the test does."""
        farm = self.procs.start(["/usr/bin/python3", "-c", FARM, str(self.FARM), kind], farmer)
        wait_for(lambda: process_count(farmer.pw_uid) > self.FARM, HANG, "the farm")
        self.daemon.wait_samples(int(2 * self.SCAN / SAMPLE) + 2)
        return farm

    def end(self, farm):
        farm.send_signal(signal.SIGTERM)
        farm.wait(HANG)

    def assert_hog_flagged(self, hogger):
        self.procs.start([lgtest.SPIN, "2"], hogger)
        event = self.daemon.wait_event(HANG, event="violation", uid=hogger.pw_uid)
        self.assert_full_window(event, 2.0, 0.5)

    def test_zombies_hold_no_descriptor(self):
        farm = self.farm("zombies", self.users.add("lgtest33"))
        try:
            self.assert_hog_flagged(self.users.add("lgtest34"))
            self.assertLess(len(os.listdir(f"/proc/{self.daemon.proc.pid}/fd")), self.LIMIT // 2)
        finally:
            self.end(farm)

    def test_live_processes_past_the_cap_still_count(self):
        farm = self.farm("sleep", self.users.add("lgtest35"))
        try:
            self.assert_hog_flagged(self.users.add("lgtest36"))
            self.daemon.wait_event(self.SCAN + HANG, event="descriptors_capped")
        finally:
            self.end(farm)


class DescriptorFarmEnforcing(DescriptorFarm):
    mode = "enforce"


if __name__ == "__main__":
    lgtest.run_tests()
