"""loginguardctl why and the full user / me, on the real daemon with real
test users and processes (observe mode, so that a forbidden program
lives on to be asked about): why names the rule and the part of it that
matched, a hog's usage and how far into the window it is, the exempt
group that protects a user; a user's why about another user's process
is refused with a control_refused event; me shows the user's level and
their last hour as a chart (issue: loginguardctl why, user and me)."""

import json
import os
import re
import subprocess

import lgtest
from lgtest import wait_for

SAMPLE = 0.5
CPU = 0.5      # cores, [violation] cpu (spin 2 gets twice that on a busy node)
HANG = lgtest.HANG
ADMIN_GROUP = "lgtestwadm"
PROTECTED_GROUP = "lgtestwprot"
CTL = os.path.join(lgtest.TOP_BUILDDIR, "tools", "loginguardctl")


class Base(lgtest.DaemonTestCase):
    """The daemon and loginguardctl for the tests below; window: the
    class's [violation] window, in seconds."""
    window = None

    @classmethod
    def policy(cls):
        return lgtest.policy(lgtest.observing(workdir=cls.workdir, sample_interval=f"{SAMPLE:g}s",
                                              admin_group=ADMIN_GROUP),
                             violation=lgtest.violation(CPU, cls.window),
                             exempt={"groups": PROTECTED_GROUP},
                             levels=[lgtest.throttled(0.5)])

    @classmethod
    def daemon_rules(cls):
        return [
            {"name": "test-miner", "class": "forbidden", "comm": "lgminer"},
            {"name": "test-exe-miner", "class": "forbidden", "exe": f"{cls.workdir}/xminer"},
        ]

    @classmethod
    def prepare(cls):
        cls.ctl_bin = lgtest.private_copy(CTL, cls.workdir, "loginguardctl")
        cls.socket = f"{cls.workdir}/control.sock"
        cls.miner = lgtest.private_copy(lgtest.SPIN, cls.workdir, "lgminer")
        cls.exe_miner = lgtest.private_copy(lgtest.SPIN, cls.workdir, "xminer")

    def ctl(self, *args, user=None, env=None):
        """loginguardctl as user (root if None): (exit status, stdout, stderr)."""
        def become():
            os.setgroups([])
            os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
            os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
        p = subprocess.run([self.ctl_bin, "--socket", self.socket] + list(args),
                           capture_output=True, text=True, timeout=HANG, env=env or {},
                           preexec_fn=become if user else None, cwd="/")
        return p.returncode, p.stdout, p.stderr

    def why(self, pid, user=None):
        code, out, err = self.ctl("--json", "why", str(pid), user=user)
        self.assertEqual(code, 0, err)
        return json.loads(out)["why"]

    def why_when(self, pid, verdict, user=None):
        """why pid, once its verdict is the one expected (the daemon has
        sampled the process); the last answer is in the failure."""
        last = {}

        def answered():
            last["why"] = self.why(pid, user)
            return last["why"] if last["why"]["verdict"] == verdict else None
        try:
            return wait_for(answered, HANG, f"verdict {verdict} for pid {pid}")
        except AssertionError as e:
            raise AssertionError(f"{e}; the last answer: {last.get('why')}") from None


class Why(Base):
    # A window that does not end while the tests run: a hog stays watched
    # (over the threshold, not yet flagged) whenever a test asks, however
    # long the machine makes it wait.
    window = 600

    def test_why_names_the_rule_of_a_forbidden_program_and_the_part_that_matched(self):
        user = self.users.add("lgtestw1")
        by_comm = self.procs.start([self.miner, "1", "0.05"], user)
        by_exe = self.procs.start([self.exe_miner, "1", "0.05"], user)
        w = self.why_when(by_comm.pid, "forbidden", user=user)
        print(f"why --json (forbidden): {len(json.dumps(w))} bytes")
        self.assertEqual(w["text"][0], "class forbidden (rule test-miner, comm lgminer): would be "
                         "stopped on sight (observe mode stops nothing)")
        self.assertEqual(w["rule"]["name"], "test-miner")
        self.assertEqual(w["rule"]["matched"], [{"field": "comm", "pattern": "lgminer",
                                                 "value": "lgminer"}])
        self.assertEqual(w["process"]["uid"], user.pw_uid)
        self.assertTrue(w["rule"]["origin"].endswith("test.rules:1"), w["rule"])
        w = self.why_when(by_exe.pid, "forbidden")  # root asks
        self.assertEqual(w["text"][0], f"class forbidden (rule test-exe-miner, exe "
                         f"{self.exe_miner}): would be stopped on sight (observe mode stops "
                         "nothing)")
        # For people: the same sentence under the process's name.
        code, out, err = self.ctl("why", str(by_exe.pid), user=user)
        self.assertEqual(code, 0, err)
        self.assertIn(f"process {by_exe.pid} (xminer, uid {user.pw_uid}):", out)
        self.assertIn("rule test-exe-miner, exe", out)

    def test_why_shows_a_hogs_usage_and_how_far_into_the_window_it_is(self):
        user = self.users.add("lgtestw2")
        hog = self.procs.start([self.spin, "2"], user)
        w = self.why_when(hog.pid, "watched", user=user)
        self.assertRegex(w["text"][0], r"^user lgtestw2: [0-9.]+ cores of 0.5 for [0-9]+m?s of a "
                         r"10m window$")
        # The daemon's own figures: above the threshold, part of the way
        # into the window.
        run = w["user"]["cpu_run"]
        self.assertGreater(run["average_cores"], CPU)
        self.assertGreater(run["elapsed_s"], 0)
        self.assertLess(run["elapsed_s"], self.window)
        self.assertEqual(w["window_s"], self.window)
        # One of its threads (as top -H shows them) is answered for the process.
        tid = max(int(t) for t in os.listdir(f"/proc/{hog.pid}/task"))
        self.assertNotEqual(tid, hog.pid)
        self.assertEqual(self.why(tid, user=user)["pid"], hog.pid)
        # A quiet process of the same user is explained by the same usage.
        idle = self.procs.start([self.spin, "1", "0.05"], user)
        w = self.why_when(idle.pid, "watched", user=user)
        self.assertIn("cores of 0.5 for", w["text"][0])

    def test_why_names_the_exempt_group_that_protects_a_user(self):
        user = self.users.add(PROTECTED_GROUP)  # its own group, which [exempt] groups lists
        busy = self.procs.start([self.spin, "1"], user)
        w = self.why(busy.pid, user=user)
        self.assertEqual(w["verdict"], "protected")
        self.assertEqual(w["text"], [f"protected: member of group {PROTECTED_GROUP} "
                                     "([exempt] groups)"])
        self.assertEqual(w["user"]["exempt_group"], PROTECTED_GROUP)

    def test_a_users_why_on_another_users_process_is_refused(self):
        asker = self.users.add("lgtestw3")
        other = self.users.add("lgtestw4")
        theirs = self.procs.start([self.spin, "1", "0.05"], other)
        mark = self.daemon.mark()
        code, out, err = self.ctl("why", str(theirs.pid), user=asker)
        self.assertEqual(code, 1, out)
        self.assertIn(f"needs root or membership of the group {ADMIN_GROUP}", err)
        event = self.daemon.wait_event(HANG, after=mark, event="control_refused",
                                       uid=asker.pw_uid)
        self.assertEqual((event["by_uid"], event["request"]), (asker.pw_uid, "why"))
        self.assertNotIn(str(theirs.pid), json.dumps(event))
        # root's processes are nobody else's business either; root sees them unjudged.
        self.assertEqual(self.ctl("why", "1", user=asker)[0], 1)
        self.assertEqual(self.why(1)["verdict"], "not_judged")
        # No such process, for anyone.
        gone = subprocess.Popen(["true"])
        gone.wait()
        w = self.why(gone.pid, user=asker)
        self.assertEqual((w["verdict"], w["text"]), ("no_process", ["no such process"]))
        # A member of admin_group may ask about anyone's.
        admin = self.users.add(ADMIN_GROUP)
        self.assertEqual(self.why(theirs.pid, user=admin)["process"]["uid"], other.pw_uid)


class Me(Base):
    window = 2.0   # a violation soon, for a level to show

    def levels_reached(self, user):
        """(level, name) after each of user's violations in the log."""
        return {(v["level_after"], v["level"]["name"])
                for v in self.daemon.find(event="violation", uid=user.pw_uid)}

    def test_me_shows_the_users_level_processes_events_and_last_hour(self):
        user = self.users.add("lgtestw5")
        hog = self.procs.start([self.spin, "2"], user)
        event = self.daemon.wait_event(self.window + HANG, event="violation", uid=user.pw_uid)
        self.assert_full_window(event, self.window, CPU)
        self.assertEqual((event["level_after"], event["level"]["name"]), (1, "throttled"))
        code, out, err = self.ctl("--json", "me", user=user)
        self.assertEqual(code, 0, err)
        me = json.loads(out)
        print(f"me --json: {len(out)} bytes")
        # The level the log says the user is at: level 1's, or a later
        # one's (observe mode limits no one: the hog is flagged again
        # after each whole window, however soon the test asks).
        self.assertIn((me["user"]["level"], me["user"]["level_name"]), self.levels_reached(user))
        points = me["history"]["cpu_cores"]
        self.assertEqual((len(points), len(me["history"]["memory_bytes"])), (60, 60))
        # This minute's point: the average of the user's samples this
        # minute, the hog's among them (how much it got is the machine's
        # business).
        self.assertGreater(points[-1], 0)
        self.assertEqual(me["history"]["step_s"], 60)
        self.assertEqual(me["processes"][0]["pid"], hog.pid)
        self.assertEqual(me["processes"][0]["class"], "none")
        self.assertIn("violation", [e["event"] for e in me["events"]])
        # For people: the level, a chart in ASCII without a UTF-8 locale,
        # in block characters with one.
        code, out, err = self.ctl("me", user=user)
        self.assertEqual(code, 0, err)
        print(out)
        level = re.search(r"^level\s+([0-9]+) (.+)$", out, re.M)
        self.assertIsNotNone(level, out)
        self.assertIn((int(level[1]), level[2]), self.levels_reached(user))
        self.assertIn("CPU, last hour", out)
        self.assertRegex(out, r"\n +\+-{60}\n +-60m +-30m +now\n")
        self.assertRegex(out, r"\n +0 \|[ .:|#]*#\n")
        self.assertRegex(out, rf"\n +{hog.pid}  none ")
        self.assertRegex(out, r"\n  \S+  violation ")
        code, out, err = self.ctl("me", user=user, env={"LC_ALL": "C.UTF-8"})
        self.assertEqual(code, 0, err)
        self.assertIn("\u2588", out)
        self.assertIn("\u2514" + "\u2500" * 60, out)


if __name__ == "__main__":
    lgtest.run_tests()
