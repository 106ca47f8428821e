"""The event log cannot be used against the daemon, done for real: a user
whose hundred processes with 32 KiB command lines are each an event gets
a bounded share of the log, and a full disk under the log and the state
files stops neither sampling nor enforcement."""

import errno
import json
import os
import signal
import subprocess
import unittest

import lgtest
from lgtest import Daemon, Processes, wait_for

SAMPLE = 0.5
HANG = lgtest.HANG
FLOOD = 100           # processes of the flooding user
PER_USER = 20         # [daemon] events_per_user below
# [daemon] events_interval below, seconds: it counts from a user's first
# event, and holds the whole flood however slowly a busy machine starts
# it.  The daemon says what it held back when the interval ends or when
# it stops: the test stops it.
INTERVAL = 600
ARGV_BYTES = 32768    # each flooding process's command line, less its name


def flood_argv(program):
    """A 32 KiB command line that costs the most once escaped: bytes that
    are not UTF-8, and control characters."""
    return [program, "3600000", "lgflood", "lgflood",
            b"\xff" * (ARGV_BYTES // 2 - 1), b"\x01" * (ARGV_BYTES // 2 - 1)]


def observing(parent, workdir, per_user):
    return lgtest.policy(lgtest.observing(parent, workdir, sample_interval=f"{SAMPLE:g}s",
                                          events_per_user=per_user,
                                          events_interval=f"{INTERVAL}s"),
                         notify={"channels": ""})


def metric(daemon, name):
    """A metric's value, from loginguardctl metrics."""
    out = subprocess.run([lgtest.CTL, "--socket", f"{daemon.workdir}/control.sock", "metrics"],
                         capture_output=True, text=True, timeout=HANG, check=True).stdout
    for line in out.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"no {name} in the metrics")


class EventFlood(lgtest.DaemonTestCase):
    """Observe mode: every flooding process is a forbidden program."""

    @classmethod
    def policy(cls):
        return observing(cls.parent, cls.workdir, PER_USER)

    @classmethod
    def daemon_rules(cls):
        return [{"name": "test-flood", "class": "forbidden", "comm": "lgflood"},
                {"name": "test-miner", "class": "forbidden", "comm": "lgminer"}]

    def test_a_flood_of_events_is_bounded_and_counted(self):
        flooder = self.users.add("lgtest40")
        other = self.users.add("lgtest41")
        # The renamer helper, named lgflood, and mostly asleep: a process
        # that is nothing but its command line.
        program = lgtest.private_copy(os.path.join(lgtest.TOP_BUILDDIR, "tests", "helpers",
                                                   "renamer"), self.workdir, "lgflood")
        size_before = os.path.getsize(self.daemon.events_path)
        mark = self.daemon.mark()
        pids = {self.procs.start(flood_argv(program), flooder).pid for _ in range(FLOOD)}
        # Another user's forbidden program still gets its event.
        miner = lgtest.private_copy(lgtest.SPIN, self.workdir, "lgminer")
        self.procs.start([miner, "1", "0.05"], other)
        self.daemon.wait_event(HANG, after=mark, event="forbidden_process", uid=other.pw_uid)

        # Every flooding process judged: the events written and the ones
        # held back (the daemon's count) make the flood.
        def written():
            return self.daemon.find(after=mark, event="forbidden_process", uid=flooder.pw_uid)
        def judged():
            return len(written()) + metric(self.daemon, "loginguard_events_suppressed_total")
        wait_for(lambda: judged() >= FLOOD, HANG, "every flooding process judged")
        # What was held back is said when the daemon stops (as at the end of
        # the interval).
        self.assertEqual(self.daemon.stop(), 0)
        suppressed = self.daemon.find(after=mark, event="events_suppressed", uid=flooder.pw_uid)
        self.assertEqual(len(suppressed), 1, suppressed)
        suppressed = suppressed[0]
        written = written()
        self.assertEqual(len(written), PER_USER)
        self.assertEqual(suppressed["user"], "lgtest40")
        self.assertEqual(suppressed["held"], {"forbidden_process": FLOOD - PER_USER})
        self.assertEqual(suppressed["total"], FLOOD - PER_USER)
        self.assertEqual(suppressed["interval_s"], INTERVAL)
        # Each written event shows a bounded start of the command line,
        # and knows the whole by its length and digest.
        for event in written:
            proc = event["processes"][0]
            self.assertIn(proc["pid"], pids)
            self.assertTrue(proc["argv_truncated"])
            self.assertEqual(proc["argv_bytes"], len(b"\0".join(
                os.fsencode(a) if isinstance(a, str) else a for a in flood_argv(program))))
            self.assertEqual(len(proc["argv_sha256"]), 64)
            self.assertLessEqual(len(json.dumps(proc["argv"], separators=(",", ":"),
                                                ensure_ascii=False).encode()), 1024 + 2)
        # What the whole flood cost the log: its share, not a line per process.
        with open(self.daemon.events_path, "rb") as f:
            f.seek(size_before)
            lines = [line for line in f.read().split(b"\n") if b'"uid":%d' % flooder.pw_uid in line]
        self.assertEqual(len(lines), PER_USER + 1)
        self.assertLess(sum(len(line) for line in lines), (PER_USER + 1) * 4096)
        self.assertLess(max(len(line) for line in lines), 4096)


def mount_tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "lgtest-full", path],
                   check=True)


def fill(directory):
    """Write a file in directory until its file system is full; its path."""
    path = os.path.join(directory, "filler")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as e:
        if e.errno != errno.ENOSPC:
            raise
    finally:
        os.close(fd)
    return path


class FullDisk(unittest.TestCase):
    """Enforce mode on real cgroups, the event log and the state directory
    on a small tmpfs of the test's own that the test fills up."""

    def setUp(self):
        lgtest.Fixture.of(self, "fulldisk")
        self.procs = Processes()
        self.disk = os.path.join(self.workdir, "disk")
        mount_tmpfs(self.disk, "1m")
        self.addCleanup(self.unmount)
        lgtest.write_rules(self.workdir, [
            {"name": "test-miner", "class": "forbidden", "comm": "lgminer"}])
        # A violation by memory: however busy the node's cores are, the
        # hog's memory is above the threshold.
        self.daemon = Daemon(self.workdir, lgtest.policy(
            lgtest.enforcing(self.parent, self.workdir, event_log=f"{self.disk}/events.jsonl",
                             state_dir=f"{self.disk}/state", sample_interval=f"{SAMPLE:g}s"),
            violation=lgtest.violation(0, 2, memory="100M"),
            levels=[lgtest.level("throttled", cpu=0.5, memory=0, stop=False, duration="10m")],
            notify={"channels": "login"}), start_timeout=HANG)
        self.daemon.events_path = f"{self.disk}/events.jsonl"

    def unmount(self):
        if os.path.ismount(self.disk):
            subprocess.run(["umount", self.disk], check=True)

    def tearDown(self):
        self.daemon.stop()
        self.procs.stop_all()
        lgtest.assert_none_left(self.procs.uids | self.users.uids(), self.id())
        self.unmount()

    def said(self, *parts):
        """How many lines the daemon said on its terminal with all of parts."""
        return sum(all(p in line for p in parts)
                   for line in self.daemon.stderr_text().split("\n"))

    def stop_a_miner(self, user, miner):
        """A forbidden program of user's, stopped by the daemon."""
        p = self.procs.start([miner, "1", "0.05"], user)
        self.assertEqual(p.wait(HANG), -signal.SIGTERM, "the forbidden program was not stopped")

    def memory_hog(self, user, memhog):
        """A memhog of user's holding 200 MB from once it is in its user's
        cgroup (v1 leaves what a process held before a move charged where
        it was)."""
        hog = self.procs.start([memhog, "0@0", "200@usr1"], user)
        procs = os.path.join(lgtest.cgroup_dirs(self.parent)["memory"], f"user-{user.pw_uid}",
                             "cgroup.procs")
        wait_for(lambda: os.path.exists(procs) and str(hog.pid) in lgtest.read(procs).split(),
                 HANG, "the memory hog in its user's cgroup")
        hog.send_signal(signal.SIGUSR1)
        return hog

    def test_enforcement_goes_on_and_the_log_resumes(self):
        self.daemon.start()
        miner_user = self.users.add("lgtest42")
        hog_user = self.users.add("lgtest43")
        miner = lgtest.private_copy(lgtest.SPIN, self.workdir, "lgminer")
        memhog = lgtest.private_copy(lgtest.MEMHOG, self.workdir, "memhog")
        self.stop_a_miner(miner_user, miner)
        filler = fill(self.disk)
        # What room the log's last page had left goes to the next events;
        # each program stopped is a few of them.
        for _ in range(20):
            if self.said("cannot write the event log"):
                break
            self.stop_a_miner(miner_user, miner)
        self.assertEqual(self.said("cannot write the event log"), 1)
        logged = self.daemon.events()
        # The disk is full: enforcement goes on.  A forbidden program is
        # stopped, and a violation is limited on the user's cgroup...
        self.stop_a_miner(miner_user, miner)
        self.memory_hog(hog_user, memhog)
        cpu = os.path.join(lgtest.cgroup_dirs(self.parent)["cpu"], f"user-{hog_user.pw_uid}")
        wait_for(lambda: os.path.exists(cpu) and lgtest.cpu_quota(cpu) == 0.5, HANG,
                 "the violation's limit on the user's cgroup")
        # ...though its level could not be written: that is said once, as
        # it is for the notices kept for the next login.
        state = ("state_error: ", "state.json")
        wait_for(lambda: self.said(*state), HANG, "the state error on the terminal")
        self.stop_a_miner(miner_user, miner)
        self.assertEqual(self.said(*state), 1)
        self.assertEqual(self.said("state_error: ", "login-notices"), 1)
        self.assertEqual(self.said("cannot write the event log"), 1)
        self.assertEqual(self.daemon.events(), logged, "the full log changed")
        # Room again: the log says what it lost, the state is written.
        os.unlink(filler)
        lost = self.daemon.wait_event(HANG, after=len(logged), event="events_lost")
        self.assertGreater(lost["lost"], 3)
        def written_again():
            return {f for e in self.daemon.find(after=len(logged), event="state_written")
                    for f in ("state.json", "login-notices") if f in e["message"]}
        wait_for(lambda: written_again() == {"state.json", "login-notices"}, HANG,
                 "the state and the login notices written again")
        with open(f"{self.disk}/state/state.json") as f:
            saved = {u["uid"]: u for u in json.load(f)["users"]}
        self.assertEqual(saved[hog_user.pw_uid]["level"], 1)
        with open(f"{self.disk}/state/login-notices/{miner_user.pw_uid}.json") as f:
            kinds = [n["kind"] for n in json.load(f)["notices"]]
        self.assertIn("forbidden", kinds)
        # Every line of the log is whole.
        with open(self.daemon.events_path) as f:
            for line in f:
                json.loads(line)
        # The penalty outlives a crash.
        self.daemon.proc.send_signal(signal.SIGKILL)
        self.daemon.proc.wait()
        restarted = self.daemon.mark()
        self.daemon.start()
        self.daemon.wait_event(HANG, after=restarted, event="limits_set", uid=hog_user.pw_uid,
                               level=1)


class FileSizeLimit(lgtest.DaemonTestCase):
    """A daemon started under a file size limit (RLIMIT_FSIZE, as a unit's
    LimitFSIZE= or a shell's ulimit -f sets): the event log reaches it.
    The kernel's answer to a write past it is SIGXFSZ, whose default
    action ends the process."""

    LIMIT = 64 * 1024

    @classmethod
    def policy(cls):
        return observing(cls.parent, cls.workdir, 0)

    @classmethod
    def daemon_rules(cls):
        return [{"name": "test-miner", "class": "forbidden", "comm": "lgminer"}]

    @classmethod
    def make_daemon(cls):
        return Daemon(cls.workdir, cls.policy(), wrapper=["prlimit", f"--fsize={cls.LIMIT}"],
                      start_timeout=HANG)

    def test_a_log_at_the_limit_does_not_end_the_daemon(self):
        user = self.users.add("lgtest44")
        miner = lgtest.private_copy(lgtest.SPIN, self.workdir, "lgminer")
        # In observe mode each is an event of some 1.5 KiB, every sample.
        for _ in range(60):
            self.procs.start([miner, "1", "0.01", "600", "x" * 4000], user)
        wait_for(lambda: "cannot write the event log" in self.daemon.stderr_text(),
                 HANG, "the daemon to say the log is full")
        self.assertLessEqual(os.path.getsize(self.daemon.events_path), self.LIMIT)
        # It goes on: more programs, more events (on its terminal, as the
        # log is full), and it is still running.
        def seen():
            return self.daemon.stderr_text().count("forbidden_process: user lgtest44")
        before = seen()
        for _ in range(5):
            self.procs.start([miner, "1", "0.01", "600"], user)
        wait_for(lambda: seen() >= before + 5, HANG, "events after the log was full")
        self.assertIsNone(self.daemon.proc.poll(), "the daemon ended at the file size limit")


if __name__ == "__main__":
    lgtest.run_tests()
