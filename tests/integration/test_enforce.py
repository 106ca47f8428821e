"""The daemon in enforce mode with the cgroupfs backend on this machine's
real cgroups (v1 here), below the test run's own cgroup: real limits,
real signals, real test users (issue: enforcement acceptance)."""

import json
import os
import signal
import subprocess
import unittest

import lgtest
from lgtest import Daemon, Processes, wait_for

SAMPLE = 0.5
WINDOW = 2.0
CPU = 0.5               # cores, the violation threshold (spin 2 gets twice that on a busy node)
THROTTLE = 0.25         # cores, level 1
LEVEL1_SECONDS = 6
MEMORY_LIMIT_MB = 250   # level 1
GRACE = 2.0             # seconds, the compute rule's grace
FLAG_TIMEOUT = WINDOW + lgtest.HANG
HANG = lgtest.HANG


def policy(parent, workdir, level1=f"{LEVEL1_SECONDS}s"):
    """The ladder: level 1 for level1 (a time), then the shipped ladder's
    second and third levels, tightened to the test's sizes."""
    memory = f"{MEMORY_LIMIT_MB}M"
    return lgtest.policy(
        lgtest.enforcing(parent, workdir, sample_interval=f"{SAMPLE:g}s"),
        classes={"exempt_cpu": "0.1 cores"},
        violation=lgtest.violation(CPU, WINDOW, memory="150M"),
        exempt={"users": "lgtestex"},
        levels=[lgtest.level("throttled", cpu=THROTTLE, memory=memory, stop=False,
                             duration=level1),
                lgtest.level("restricted", cpu=0.15, memory=memory, stop=True, duration="1m"),
                lgtest.level(cpu=0.15, memory=memory)])


def rules(workdir):
    return [
        {"name": "test-exempt", "class": "exempt", "exe": f"{workdir}/exempt-spin"},
        {"name": "test-sim", "class": "compute", "exe": f"{workdir}/lgsim",
         "cpu": 0.3, "grace": f"{GRACE:g}s"},
        {"name": "test-miner", "class": "forbidden", "comm": "lgminer"},
    ]


class EnforceMode(lgtest.DaemonTestCase):
    @classmethod
    def policy(cls):
        return policy(cls.parent, cls.workdir)

    @classmethod
    def daemon_rules(cls):
        return rules(cls.workdir)

    @classmethod
    def prepare(cls):
        cls.memhog = lgtest.private_copy(lgtest.MEMHOG, cls.workdir, "memhog")

    def user_dir(self, controller, uid):
        return os.path.join(lgtest.cgroup_dirs(self.parent)[controller], f"user-{uid}")

    def read_knob(self, controller, uid, knob):
        return lgtest.read(os.path.join(self.user_dir(controller, uid), knob)).strip()

    def test_busy_loop_is_throttled_then_runs_free(self):
        user = self.users.add("lgtest1")
        hog = self.procs.start([self.spin, "2"], user)
        self.assert_full_window(self.daemon.wait_event(FLAG_TIMEOUT, event="violation",
                                                       uid=user.pw_uid), WINDOW, CPU)
        limited = self.daemon.wait_event(HANG, event="limits_set", uid=user.pw_uid, level=1)
        self.assertEqual(limited["limits"]["cpu_cores"], THROTTLE)
        cpu = self.user_dir("cpu", user.pw_uid)
        self.assertEqual(lgtest.cpu_quota(cpu), THROTTLE)
        self.assertIn(str(hog.pid), self.read_knob("cpuacct", user.pw_uid, "cgroup.procs").split())
        # The kernel holds the hog at the level's limit.
        lgtest.wait_throttled(cpu)
        # The level expires: the standing share (4 cores) is back, and the
        # kernel throttles the 2-core hog no more.
        expired = self.daemon.mark()
        self.daemon.wait_event(LEVEL1_SECONDS + HANG, event="level_expired", uid=user.pw_uid)
        freed = self.daemon.wait_event(HANG, after=expired, event="limits_set", uid=user.pw_uid,
                                       level=0)
        self.assertEqual(freed["limits"]["cpu_cores"], 4.0)
        self.assertEqual(lgtest.cpu_quota(cpu), 4.0)
        lgtest.assert_not_throttled(self, cpu)
        self.assertTrue(lgtest.alive(hog.pid))

    def memory_hog(self, user):
        """A memhog of user's that grows to 200 MB once it is in its
        user's cgroup (v1 leaves what a process held before a move charged
        where it was); the next SIGUSR1 grows it to 600 MB."""
        hog = self.procs.start([self.memhog, "0@0", "200@usr1", "600@usr1"], user)
        wait_for(lambda: os.path.exists(self.user_dir("memory", user.pw_uid)) and str(hog.pid)
                 in self.read_knob("memory", user.pw_uid, "cgroup.procs").split(), HANG,
                 "the memory hog in its user's cgroup")
        hog.send_signal(signal.SIGUSR1)
        return hog

    def test_memory_hog_is_held_at_the_level_limit(self):
        user = self.users.add("lgtest2")
        other = self.procs.start(["sleep", "600"], user)
        hog = self.memory_hog(user)
        event = self.daemon.wait_event(FLAG_TIMEOUT, event="violation", uid=user.pw_uid)
        self.assertEqual(event["reason"], "memory")
        self.daemon.wait_event(HANG, event="limits_set", uid=user.pw_uid, level=1)
        limit = int(self.read_knob("memory", user.pw_uid, "memory.limit_in_bytes"))
        self.assertEqual(limit, MEMORY_LIMIT_MB << 20)
        # It grows past the limit: the kernel stops it inside the user's cgroup.
        hog.send_signal(signal.SIGUSR1)
        wait_for(lambda: not lgtest.alive(hog.pid), HANG, "the hog to be stopped by its limit")
        peak = int(self.read_knob("memory", user.pw_uid, "memory.max_usage_in_bytes"))
        self.assertLessEqual(peak, limit)
        self.assertTrue(lgtest.alive(other.pid), "the user's other process was hit")

    def test_compute_program_is_stopped_after_its_grace(self):
        user = self.users.add("lgtest3")
        sim = lgtest.private_copy(lgtest.SPIN, self.workdir, "lgsim")
        proc = self.procs.start([sim, "1"], user)
        stopping = self.daemon.wait_event(HANG, event="process_stopping", uid=user.pw_uid)
        self.assertEqual(stopping["process"]["pid"], proc.pid)
        self.assertEqual(stopping["process"]["exe"], sim)
        self.assertEqual(stopping["signal"], "SIGTERM")
        # Judged after its grace, counted by the daemon's own samples from
        # the first interval it was above the rule's threshold.
        judged = self.daemon.find(event="compute_process", uid=user.pw_uid)[0]
        self.assertGreaterEqual(judged["usage"]["window_s"], GRACE - 0.001, judged)
        self.daemon.wait_event(HANG, event="process_exited", uid=user.pw_uid)
        self.assertEqual(proc.wait(HANG), -signal.SIGTERM)
        # Its user has no process left: the cgroup goes at a later sweep.
        wait_for(lambda: not os.path.exists(self.user_dir("cpu", user.pw_uid)), HANG,
                 "the empty user cgroup to be removed")

    def test_forbidden_program_is_stopped_on_sight(self):
        # (How soon after its start: make bench prints it.)
        user = self.users.add("lgtest4")
        miner = lgtest.private_copy(lgtest.SPIN, self.workdir, "lgminer")
        # It ignores SIGTERM: the SIGKILL after the grace ends it.
        proc = self.procs.start(["/bin/sh", "-c", f"trap '' TERM; exec {miner} 1 0.05"], user)
        stopping = self.daemon.wait_event(HANG, event="process_stopping", uid=user.pw_uid)
        self.assertEqual(stopping["process"]["pid"], proc.pid)
        self.assertEqual(stopping["process"]["exe"], miner)
        # On sight: no window, whatever it used.
        seen = self.daemon.find(event="forbidden_process", uid=user.pw_uid)[0]
        self.assertLessEqual(seen["usage"]["window_s"], 2 * SAMPLE, seen)
        killed = self.daemon.wait_event(HANG, event="process_killed", uid=user.pw_uid)
        self.assertEqual(killed["signal"], "SIGKILL")
        self.assertEqual(proc.wait(HANG), -signal.SIGKILL)

    def test_protected_users_are_never_touched(self):
        exempt_user = self.users.add("lgtestex")
        system_user = self.users.add("lgtestsys", system=True)
        control_user = self.users.add("lgtest9")
        # Each holds 200 MB, above the threshold whatever else the machine
        # runs (a CPU hog's share is what the busy cores leave it).
        hogs = [self.procs.start([self.memhog, "200@0"], user)
                for user in (None, exempt_user, system_user)]  # None: root
        cgroups_before = {h.pid: lgtest.read(f"/proc/{h.pid}/cgroup") for h in hogs}
        # A positive control started with them: once it is limited, the
        # daemon has watched the protected hogs as long as it takes to
        # limit anyone; one more sample holds their verdicts too.
        self.memory_hog(control_user)
        self.daemon.wait_event(FLAG_TIMEOUT, event="limits_set", uid=control_user.pw_uid,
                               level=1)
        self.daemon.wait_samples(1)
        for uid in (0, exempt_user.pw_uid, system_user.pw_uid):
            self.assertEqual(self.daemon.find(uid=uid), [], f"an event for protected uid {uid}")
        for h in hogs:
            self.assertTrue(lgtest.alive(h.pid))
            self.assertEqual(lgtest.read(f"/proc/{h.pid}/cgroup"), cgroups_before[h.pid],
                             "a protected process was moved")
        for uid in (0, exempt_user.pw_uid, system_user.pw_uid):
            self.assertFalse(os.path.exists(self.user_dir("cpu", uid)))

    def test_exempt_programs_are_limited_but_never_stopped(self):
        # An exempt program (sshd, tmux...) shares its user's cgroup and
        # limits like everything else the user runs; it is never stopped.
        normal = self.users.add("lgtest5")
        exempt_prog = lgtest.private_copy(lgtest.SPIN, self.workdir, "exempt-spin")
        hog = self.procs.start([exempt_prog, "2"], normal)
        self.daemon.wait_event(FLAG_TIMEOUT, event="violation", uid=normal.pw_uid)
        self.daemon.wait_event(HANG, event="limits_set", uid=normal.pw_uid, level=1)
        wait_for(lambda: str(hog.pid) in
                 self.read_knob("cpuacct", normal.pw_uid, "cgroup.procs").split(), HANG,
                 "the exempt program in its user's cgroup")
        lgtest.wait_throttled(self.user_dir("cpu", normal.pw_uid))
        self.assertEqual(self.daemon.find(event="process_stopping", uid=normal.pw_uid), [])
        self.assertTrue(lgtest.alive(hog.pid))


class MemoryHeldWhereItIs(lgtest.DaemonTestCase):
    """A memory level below what the user already holds: v1 refuses the
    limit (EBUSY: without swap it cannot reclaim).  The limit goes to what
    the user holds, so that they cannot grow; once their memory falls, the
    level's limit is set."""
    HELD_MB = 400
    prepare = EnforceMode.__dict__["prepare"]  # the classmethod, for this class
    user_dir = EnforceMode.user_dir
    read_knob = EnforceMode.read_knob

    @classmethod
    def policy(cls):
        return lgtest.policy(
            lgtest.enforcing(cls.parent, cls.workdir, sample_interval=f"{SAMPLE:g}s"),
            violation=lgtest.violation(0, WINDOW, memory="150M"),
            levels=[lgtest.level("throttled", memory=f"{MEMORY_LIMIT_MB}M", stop=False,
                                 duration="10m")],
            notify={"channels": ""})

    def test_a_memory_level_below_what_is_held_holds_it_there(self):
        user = self.users.add("lgtest9")
        hog = self.procs.start([self.memhog, "0@0", f"{self.HELD_MB}@usr1", "800@usr1"], user)
        wait_for(lambda: os.path.exists(self.user_dir("memory", user.pw_uid)) and str(hog.pid)
                 in self.read_knob("memory", user.pw_uid, "cgroup.procs").split(), HANG,
                 "the memory hog in its user's cgroup")
        hog.send_signal(signal.SIGUSR1)
        event = self.daemon.wait_event(FLAG_TIMEOUT, event="violation", uid=user.pw_uid)
        self.assertEqual(event["reason"], "memory")
        held = self.daemon.wait_event(HANG, event="limits_set", uid=user.pw_uid, level=1)
        self.assertIn("held at", held["message"])
        limit = int(self.read_knob("memory", user.pw_uid, "memory.limit_in_bytes"))
        self.assertGreaterEqual(limit, self.HELD_MB << 20)
        self.assertLess(limit, (self.HELD_MB + 50) << 20)
        # It cannot grow: the kernel stops it inside the user's cgroup.
        # (The peak is counted afresh from here: it had been higher a
        # moment before the hold.)
        with open(os.path.join(self.user_dir("memory", user.pw_uid),
                               "memory.max_usage_in_bytes"), "w") as f:
            f.write("0")
        hog.send_signal(signal.SIGUSR1)
        # Killed by the kernel as it grows (SIGKILL); or, had this test
        # been held up for a window, stopped by the daemon for staying
        # above the level's memory (SIGTERM: the next test).  Either way
        # it never held more than the limit.
        self.assertIn(hog.wait(HANG), (-9, -15))
        self.assertLessEqual(int(self.read_knob("memory", user.pw_uid,
                                                "memory.max_usage_in_bytes")), limit)
        # Its memory gone, the level's own limit.
        set_ = self.daemon.wait_event(HANG, after=self.daemon.events().index(held) + 1,
                                      event="limits_set", uid=user.pw_uid, level=1)
        self.assertNotIn("message", set_)
        self.assertEqual(int(self.read_knob("memory", user.pw_uid, "memory.limit_in_bytes")),
                         MEMORY_LIMIT_MB << 20)

    def test_a_user_who_stays_above_the_level_has_the_largest_process_stopped(self):
        """Held where it stands and growing no more, the memory is still
        above the level's: after a window, the largest process is stopped."""
        user = self.users.add("lgtest37")
        small = self.procs.start([self.memhog, "20@0"], user)
        hog = self.procs.start([self.memhog, "0@0", f"{self.HELD_MB}@usr1"], user)
        wait_for(lambda: os.path.exists(self.user_dir("memory", user.pw_uid)) and str(hog.pid)
                 in self.read_knob("memory", user.pw_uid, "cgroup.procs").split(), HANG,
                 "the memory hog in its user's cgroup")
        hog.send_signal(signal.SIGUSR1)
        self.daemon.wait_event(FLAG_TIMEOUT, event="violation", uid=user.pw_uid)
        held = self.daemon.wait_event(HANG, event="limits_set", uid=user.pw_uid, level=1)
        self.assertIn("held at", held["message"])
        over = self.daemon.wait_event(FLAG_TIMEOUT, event="memory_over_level", uid=user.pw_uid)
        self.assertEqual(over["action"], "stop")
        self.assertGreater(over["usage"]["memory_bytes"], MEMORY_LIMIT_MB << 20)
        self.assertGreaterEqual(over["usage"]["window_s"], WINDOW - 0.1)
        self.assertEqual(over["processes"][0]["pid"], hog.pid)
        self.daemon.wait_event(HANG, event="process_stopping", uid=user.pw_uid)
        self.assertEqual(hog.wait(HANG), -15)
        # The smaller one, now under the level's memory, runs on.
        self.assertIsNone(small.poll())


class OwnDaemon(unittest.TestCase):
    """Tests that start the daemon themselves (self.daemon), each its own."""
    name = "own"

    def setUp(self):
        lgtest.Fixture.of(self, self.name)
        self.procs = Processes()
        lgtest.write_rules(self.workdir, rules(self.workdir))
        self.daemon = None

    def tearDown(self):
        if self.daemon:
            self.daemon.stop()
        self.procs.stop_all()
        lgtest.assert_none_left(self.procs.uids | self.users.uids(), self.id())


class ArrivedOutside(OwnDaemon):
    """Jobs that start outside their user's cgroup (as cron, at and
    systemd-run start them): on v1 what they held before they were moved
    stays charged where it was made, out of reach of the user's limit."""
    name = "arrived"

    def setUp(self):
        super().setUp()
        self.memhog = lgtest.private_copy(lgtest.MEMHOG, self.workdir, "memhog")

    def start_daemon(self, text):
        self.daemon = Daemon(self.workdir, text)
        self.daemon.start()

    def user_dir(self, uid):
        return os.path.join(lgtest.cgroup_dirs(self.parent)["memory"], f"user-{uid}")

    def test_memory_held_before_the_move_counts(self):
        user = self.users.add("lgtest38")
        hog = self.procs.start([self.memhog, "300@0"], user)
        wait_for(lambda: lgtest.rss_bytes(hog.pid) >= 290 << 20, HANG, "300 MB filled outside")
        self.start_daemon(policy(self.parent, self.workdir))
        wait_for(lambda: os.path.exists(self.user_dir(user.pw_uid)) and str(hog.pid) in
                 lgtest.read(os.path.join(self.user_dir(user.pw_uid), "cgroup.procs")).split(),
                 HANG, "the hog moved into its user's cgroup")
        # Its 300 MB stayed charged where they were made...
        charged = int(lgtest.read(os.path.join(self.user_dir(user.pw_uid),
                                               "memory.usage_in_bytes")))
        self.assertLess(charged, 100 << 20)
        # ...and count all the same: a violation, then the level's memory
        # (which the kernel cannot hold it to) stops it after a window.
        event = self.daemon.wait_event(FLAG_TIMEOUT, event="violation", uid=user.pw_uid)
        self.assertEqual(event["reason"], "memory")
        self.assertGreaterEqual(event["usage"]["memory_bytes"], 290 << 20)
        over = self.daemon.wait_event(FLAG_TIMEOUT, event="memory_over_level", uid=user.pw_uid)
        self.assertEqual(over["processes"][0]["pid"], hog.pid)
        self.assertEqual(hog.wait(HANG), -15)

    def test_a_job_that_takes_its_users_uid_is_moved_at_once(self):
        """Samples four minutes apart: the move comes with the uid change
        (within the hang guard), in a sample the change brought forward,
        or the one after it that the user directory's first answer about
        the user brings forward (until then the daemon cannot tell whether
        the user is protected)."""
        self.start_daemon(lgtest.policy(lgtest.enforcing(self.parent, self.workdir,
                                                         sample_interval="240s",
                                                         scan_interval="240s")))
        user = self.users.add("lgtest39")
        # The start-up sample is behind us: the next is four minutes away.
        wait_for(lambda: self.daemon.samples() >= 1, HANG, "the first sample")
        before = self.daemon.samples()
        # Started as root, it takes the user's uid (Processes.start's
        # setresuid), then execs: as cron starts a job.
        job = self.procs.start([self.memhog, "0@0"], user)
        wait_for(lambda: os.path.exists(self.user_dir(user.pw_uid)) and str(job.pid) in
                 lgtest.read(os.path.join(self.user_dir(user.pw_uid), "cgroup.procs")).split(),
                 HANG, "the job moved into its user's cgroup")
        self.assertIn(self.daemon.samples() - before, (1, 2))


class Restart(OwnDaemon):
    name = "restart"

    def test_kill_9_keeps_the_penalty(self):
        daemon = self.daemon = Daemon(self.workdir, policy(self.parent, self.workdir,
                                                           level1="10m"))
        daemon.start()
        user = self.users.add("lgtest6")
        spin = lgtest.private_copy(lgtest.SPIN, self.workdir, "spin")
        self.procs.start([spin, "2"], user)
        violation = daemon.wait_event(FLAG_TIMEOUT, event="violation", uid=user.pw_uid)
        daemon.wait_event(HANG, event="limits_set", uid=user.pw_uid, level=1)
        daemon.proc.send_signal(signal.SIGKILL)
        daemon.proc.wait()
        quota = os.path.join(lgtest.cgroup_dirs(self.parent)["cpu"], f"user-{user.pw_uid}",
                             "cpu.cfs_quota_us")
        # Someone lifts the limit while the daemon is down...
        with open(quota, "w") as f:
            f.write("-1")
        restarted = daemon.mark()
        daemon.start()
        # ...and the restarted daemon puts it back: same level, same expiry.
        daemon.wait_event(HANG, after=restarted, event="limits_set", uid=user.pw_uid, level=1)
        with open(quota) as f:
            self.assertEqual(f.read().strip(), str(int(THROTTLE * 100000)))
        with open(os.path.join(self.workdir, "state.json")) as f:
            saved = {u["uid"]: u for u in json.load(f)["users"]}[user.pw_uid]
        self.assertEqual(saved["level"], 1)
        self.assertEqual(saved["until"] // 1000,
                         int(lgtest.iso_to_epoch(violation["until"]) * 1000))
        # No second violation for the same episode after the restart, in
        # the samples of a whole window and two more.
        daemon.wait_samples(int(WINDOW / SAMPLE) + 2)
        self.assertEqual(len(daemon.find(event="violation", uid=user.pw_uid)), 1)
        self.assertEqual(daemon.stop(), 0)

    def test_release_on_exit_lifts_the_limits(self):
        daemon = self.daemon = Daemon(self.workdir, policy(self.parent, self.workdir),
                                      args=["--release-on-exit"])
        daemon.start()
        user = self.users.add("lgtest7")
        spin = lgtest.private_copy(lgtest.SPIN, self.workdir, "spin")
        self.procs.start([spin, "2"], user)
        daemon.wait_event(FLAG_TIMEOUT, event="limits_set", uid=user.pw_uid, level=1)
        quota = os.path.join(lgtest.cgroup_dirs(self.parent)["cpu"], f"user-{user.pw_uid}",
                             "cpu.cfs_quota_us")
        self.assertEqual(lgtest.read(quota).strip(), str(int(THROTTLE * 100000)))
        self.assertEqual(daemon.stop(), 0)
        self.assertEqual(lgtest.read(quota).strip(), "-1")

    def stopped_daemon_with(self, name, argvs):
        """A daemon that limited user name, with a process for each argv,
        then stopped (it keeps its limits when it stops); the user and the
        processes, once each is in the user's cgroup in every hierarchy."""
        daemon = self.daemon = Daemon(self.workdir, policy(self.parent, self.workdir))
        daemon.start()
        user = self.users.add(name)
        procs = [self.procs.start(argv, user) for argv in argvs]
        daemon.wait_event(FLAG_TIMEOUT, event="limits_set", uid=user.pw_uid, level=1)
        for c, d in lgtest.cgroup_dirs(self.parent).items():
            procs_file = f"{d}/user-{user.pw_uid}/cgroup.procs"
            for p in procs:
                wait_for(lambda: str(p.pid) in lgtest.read(procs_file).split(), HANG,
                         f"{p.pid} in {procs_file}")
        self.assertEqual(daemon.stop(), 0)
        return user, procs

    def release(self):
        return subprocess.run([lgtest.DAEMON, "--release", "--config", self.daemon.conf],
                              capture_output=True, text=True, timeout=HANG)

    def assert_nothing_left_and_runs_above(self, pid):
        """No cgroup of loginguard's is left, and pid runs in the cgroup
        above the parent (this test's own) in every hierarchy."""
        for c, d in lgtest.cgroup_dirs(self.parent).items():
            self.assertFalse(os.path.exists(d), f"{d} is left")
            above = os.path.dirname(d)
            self.assertIn(str(pid), lgtest.read(f"{above}/cgroup.procs").split(),
                          f"{pid} not in {above}")
        self.assertTrue(lgtest.alive(pid))

    def test_release_lifts_what_a_stopped_daemon_left(self):
        """What package removal runs after stopping the daemon, which
        keeps its limits when it stops: the user's processes go to the
        cgroup above the parent, and the cgroups go."""
        spin = lgtest.private_copy(lgtest.SPIN, self.workdir, "spin")
        user, (hog,) = self.stopped_daemon_with("lgtest8", [[spin, "2"]])
        cpu = os.path.join(lgtest.cgroup_dirs(self.parent)["cpu"], f"user-{user.pw_uid}")
        self.assertEqual(lgtest.read(f"{cpu}/cpu.cfs_quota_us").strip(),
                         str(int(THROTTLE * 100000)))
        r = self.release()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        self.assert_nothing_left_and_runs_above(hog.pid)

    def test_release_empties_a_group_that_forks_all_the_time(self):
        """A user who keeps forking to keep the cgroup populated: the
        forking process, once moved, forks into its new cgroup, and the
        children left behind follow at the next round."""
        forker = os.path.join(self.workdir, "forker.py")
        with open(forker, "w") as f:
            f.write("import os, signal, time\n"
                    "signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
                    "while True:\n"
                    "    if os.fork() == 0:\n"
                    "        time.sleep(0.2)\n"
                    "        os._exit(0)\n"
                    "    time.sleep(0.002)\n")
        os.chmod(forker, 0o644)
        spin = lgtest.private_copy(lgtest.SPIN, self.workdir, "spin")
        user, (hog, fork) = self.stopped_daemon_with(
            "lgtest9", [[spin, "2"], ["/usr/bin/python3", forker]])
        # Its children are born in the group, faster than one a round.
        for d in lgtest.cgroup_dirs(self.parent).values():
            procs = f"{d}/user-{user.pw_uid}/cgroup.procs"
            wait_for(lambda: len(lgtest.read(procs).split()) > 10, HANG, f"children in {procs}")
        r = self.release()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_nothing_left_and_runs_above(fork.pid)
        self.assert_nothing_left_and_runs_above(hog.pid)

if __name__ == "__main__":
    lgtest.run_tests()
