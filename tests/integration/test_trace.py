"""The usage trace and loginguardctl simulate (issue: tune the policy on
the node's own history): a trace recorded by the real daemon while real
test users run real hogs, replayed offline under the same policy and
under candidates; and the trace after kill -9 of the daemon."""

import glob
import json
import os
import shutil
import signal
import stat
import subprocess

import lgtest

CTL = os.path.join(lgtest.TOP_BUILDDIR, "tools", "loginguardctl")
SAMPLE = 0.5   # seconds, [daemon] sample_interval below
WINDOW = 2.0   # seconds, [violation] window below
CPU = 0.25     # cores, [violation] cpu below
# The hog: one thread that wants 0.4 of a core, more than the threshold
# and less than twice it (a candidate's), which it gets on a busy node too
# (five sessions that each want a core still leave it that on two).  It
# stays above half the threshold in every sample, where the daemon looks
# at a user's processes (and records them in the trace).
HOG = 0.4
HANG = lgtest.HANG
# The ladder's three rungs, one window each.
LADDER_TIMEOUT = 3 * WINDOW + HANG


def policy(parent, workdir):
    rules_dirs = f"{workdir}/rules.d, {lgtest.SHIPPED_RULES}"
    return lgtest.policy(lgtest.observing(parent, workdir, sample_interval=f"{SAMPLE:g}s",
                                          rules_dirs=rules_dirs),
                         violation=lgtest.violation(CPU, WINDOW, memory=None,
                                                    memory_pressure=None))


def simulate(conf, candidate, *args):
    r = subprocess.run([CTL, "simulate", "--config", candidate, "--current", conf,
                        "--since", "1h"] + list(args), capture_output=True, text=True,
                       timeout=2 * HANG)
    return r


def simulate_json(test, conf, candidate, *args):
    r = simulate(conf, candidate, "--json", *args)
    test.assertEqual(r.returncode, 0, r.stderr)
    return json.loads(r.stdout)


def user_entry(result, uid):
    for u in result["users"]:
        if u["uid"] == uid:
            return u
    return None


def candidate_config(workdir, name, dropin, rules=()):
    """A candidate: the daemon's config and drop-ins copied to their own
    directory, with one drop-in more (and rules of its own, first)."""
    d = os.path.join(workdir, name)
    shutil.copytree(os.path.join(workdir, "conf.d"), os.path.join(d, "conf.d"))
    shutil.copy(os.path.join(workdir, "loginguard.conf"), os.path.join(d, "loginguard.conf"))
    os.makedirs(os.path.join(d, "rules.d"), exist_ok=True)
    with open(os.path.join(d, "rules.d", "candidate.rules"), "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rules))
    extra = dropin
    if rules:
        extra += "\n" + lgtest.policy({"rules_dirs": f"{d}/rules.d, {workdir}/rules.d, "
                                                    f"{lgtest.SHIPPED_RULES}"})
    with open(os.path.join(d, "conf.d", "99-candidate.conf"), "w") as f:
        f.write(extra)
    return os.path.join(d, "loginguard.conf")


class RecordedTrace(lgtest.DaemonTestCase):
    """One recording: lgtest1 runs a 0.4-core hog (named cruncher) up the
    ladder, lgtest2 a forbidden program (a copy named xmrig) at almost no
    CPU, lgtest3 a 0.1-core job that is nobody's business."""

    @classmethod
    def policy(cls):
        return policy(cls.parent, cls.workdir)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        procs = lgtest.Processes()
        try:
            cls.hog_user = cls.users.add("lgtest1")
            cls.miner_user = cls.users.add("lgtest2")
            cls.quiet_user = cls.users.add("lgtest3")
            cruncher = lgtest.private_copy(lgtest.SPIN, cls.workdir, "cruncher")
            miner = lgtest.private_copy(lgtest.SPIN, cls.workdir, "xmrig")
            cls.hog = procs.start([cruncher, "1", f"{HOG:g}"], cls.hog_user)
            cls.miner = procs.start([miner, "1", "0.05"], cls.miner_user)
            procs.start([cls.spin, "1", "0.1"], cls.quiet_user)
            cls.daemon.wait_event(LADDER_TIMEOUT, event="violation", uid=cls.hog_user.pw_uid,
                                  level_after=3)
            cls.daemon.wait_event(LADDER_TIMEOUT, event="forbidden_process",
                                  uid=cls.miner_user.pw_uid)
        finally:
            procs.stop_all()
        # A few quiet samples, then the daemon ends: the trace is complete,
        # every sample counted so far in it.
        cls.daemon.wait_samples(3)
        cls.samples = cls.daemon.samples()
        cls.daemon.stop()
        cls.conf = cls.daemon.conf
        cls.trace_dir = os.path.join(cls.workdir, "trace")

    def events(self, name, uid):
        return [e for e in self.daemon.find(event=name) if e.get("uid") == uid]

    def test_trace_files_are_root_only(self):
        st = os.lstat(self.trace_dir)
        self.assertTrue(stat.S_ISDIR(st.st_mode))
        self.assertEqual(stat.S_IMODE(st.st_mode), 0o700)
        files = glob.glob(os.path.join(self.trace_dir, "*.jsonl"))
        self.assertGreaterEqual(len(files), 1)
        for f in files:
            st = os.lstat(f)
            self.assertTrue(stat.S_ISREG(st.st_mode))
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o600)
            self.assertEqual(st.st_uid, 0)
        # What a replay needs of the hog is there: its command line.
        with open(sorted(files)[0]) as f:
            procs = [json.loads(line) for line in f if line.startswith('{"t":"proc"')]
        hog = [p for p in procs if p["pid"] == self.hog.pid]
        self.assertTrue(hog, "the hog's process is in the trace")
        self.assertEqual(hog[0]["argv"].split("\0")[:3],
                         [os.path.join(self.workdir, "cruncher"), "1", f"{HOG:g}"])

    def test_same_policy_reproduces_the_daemons_decisions(self):
        result = simulate_json(self, self.conf, self.conf)
        self.assertGreaterEqual(result["trace"]["samples"], self.samples)
        events = self.events("violation", self.hog_user.pw_uid)
        hog = user_entry(result, self.hog_user.pw_uid)
        self.assertIsNotNone(hog, result)
        self.assertEqual(hog["user"], "lgtest1")
        for side in ("current", "candidate"):
            replay = hog[side]["violation_list"]
            self.assertEqual([v["level"] for v in replay], [e["level_after"] for e in events])
            for v, e in zip(replay, events):
                self.assertLessEqual(abs(v["time"] / 1e6 - lgtest.iso_to_epoch(e["time"])),
                                     SAMPLE, (v, e))
                self.assertEqual(v["reason"], e["reason"])
            self.assertEqual(hog[side]["highest_level"], 3)
            self.assertEqual(hog["difference"]["violations"], 0)
        # The forbidden program: stopped on sight, as the daemon judged it.
        miner = user_entry(result, self.miner_user.pw_uid)
        self.assertIsNotNone(miner, result)
        seen = self.events("forbidden_process", self.miner_user.pw_uid)
        self.assertEqual(miner["current"]["stopped"], len(seen))
        stopped = miner["current"]["stopped_processes"][0]
        self.assertEqual(stopped["pid"], self.miner.pid)
        self.assertEqual(stopped["why"], seen[0]["reason"])
        self.assertLessEqual(abs(stopped["time"] / 1e6 - lgtest.iso_to_epoch(seen[0]["time"])),
                             SAMPLE)
        # Nobody else was acted on, by the daemon or in the replay.
        self.assertIsNone(user_entry(result, self.quiet_user.pw_uid))
        acted = {e["uid"] for e in self.daemon.events()
                 if e.get("event") in ("violation", "forbidden_process", "compute_process")}
        self.assertEqual(acted, {u["uid"] for u in result["users"]})

    def test_doubled_cpu_threshold_means_fewer_violations(self):
        candidate = candidate_config(self.workdir, "doubled", lgtest.policy(
            violation=lgtest.violation(2 * CPU, memory=None, memory_pressure=None)))
        result = simulate_json(self, self.conf, candidate)
        hog = user_entry(result, self.hog_user.pw_uid)
        self.assertGreaterEqual(hog["current"]["violations"], 3)
        self.assertEqual(hog["candidate"]["violations"], 0)
        self.assertLess(result["totals"]["candidate"]["violations"],
                        result["totals"]["current"]["violations"])
        self.assertEqual(hog["difference"]["violations"], -hog["current"]["violations"])
        # The table for people says the same.
        text = simulate(self.conf, candidate)
        self.assertEqual(text.returncode, 0, text.stderr)
        line = next(l for l in text.stdout.splitlines() if l.startswith("lgtest1 "))
        self.assertIn(f"{hog['current']['violations']} -> 0", line)
        self.assertIn("restricted -> none", line)

    def test_extra_forbidden_rule_shows_what_it_would_stop(self):
        rule = {"name": "no-crunching", "class": "forbidden", "comm": "cruncher"}
        candidate = candidate_config(self.workdir, "forbid", "", rules=[rule])
        result = simulate_json(self, self.conf, candidate)
        hog = user_entry(result, self.hog_user.pw_uid)
        stops = hog["candidate"]["stopped_processes"]
        self.assertEqual([(s["pid"], s["comm"], s["why"]) for s in stops
                          if s["why"] == "no-crunching"],
                         [(self.hog.pid, "cruncher", "no-crunching")])
        self.assertFalse([s for s in hog["current"]["stopped_processes"]
                          if s["why"] == "no-crunching"])
        text = simulate(self.conf, candidate)
        self.assertEqual(text.returncode, 0, text.stderr)
        after = text.stdout.split("Processes the candidate would stop:")[1]
        line = next(l for l in after.splitlines() if "rule no-crunching" in l)
        self.assertIn(f"pid {self.hog.pid}  cruncher ({self.workdir}/cruncher)", line)
        self.assertTrue(line.strip().startswith("lgtest1 "), line)

    def test_candidate_errors_name_file_and_line(self):
        candidate = candidate_config(self.workdir, "broken", "[violation]\ncpu = two\n",
                                     rules=[{"name": "x", "class": "forbiden", "comm": "a"}])
        r = simulate(self.conf, candidate)
        self.assertEqual(r.returncode, 1)
        self.assertIn("99-candidate.conf:2:", r.stderr)
        self.assertIn("candidate.rules:1:", r.stderr)
        self.assertIn("nothing was replayed", r.stderr)
        self.assertEqual(r.stdout, "")

    def test_no_trace_is_exit_status_4(self):
        r = simulate(self.conf, self.conf, "--trace", os.path.join(self.workdir, "nowhere"))
        self.assertEqual(r.returncode, 4)
        self.assertIn("nowhere", r.stderr)


class KilledMidWrite(lgtest.DaemonTestCase):
    """kill -9 of the daemon while it records; then a crash's cut line."""

    @classmethod
    def policy(cls):
        return policy(cls.parent, cls.workdir)

    def test_trace_survives_kill_9(self):
        user = self.users.add("lgtest4")
        self.procs.start([self.spin, "1", f"{HOG:g}"], user)
        self.daemon.wait_event(LADDER_TIMEOUT, event="violation", uid=user.pw_uid, level_after=2)
        self.daemon.proc.send_signal(signal.SIGKILL)
        self.daemon.proc.wait()
        self.daemon.stop()
        trace_dir = os.path.join(self.workdir, "trace")
        files = sorted(glob.glob(os.path.join(trace_dir, "*.jsonl")))
        self.assertEqual(len(files), 1)
        with open(files[0], "rb") as f:
            data = f.read()
        samples = data.count(b'{"t":"sample"')
        # A crash in the middle of a write: the last sample's line cut short.
        last = data.rindex(b'{"t":"sample"')
        cut = last + (len(data) - last) // 2
        with open(files[0], "r+b") as f:
            f.truncate(cut)
        result = simulate_json(self, self.daemon.conf, self.daemon.conf)
        self.assertEqual(result["trace"]["samples"], samples - 1)
        self.assertEqual(result["trace"]["cut_lines"], 1)
        mine = user_entry(result, user.pw_uid)
        events = [e for e in self.daemon.find(event="violation") if e["uid"] == user.pw_uid]
        replayed = mine["current"]["violation_list"]
        # Every violation but one the cut sample itself decided.
        cut_time = json.loads(data[last:].split(b"\n")[0])["now"] / 1e6
        expected = [e["level_after"] for e in events if lgtest.iso_to_epoch(e["time"]) < cut_time - 0.01]
        self.assertEqual([v["level"] for v in replayed], expected)

        # The daemon started again writes a new file, never after the cut.
        self.daemon.start()
        mark = self.daemon.mark()
        self.daemon.wait_event(LADDER_TIMEOUT, after=mark, event="violation", uid=user.pw_uid)
        self.daemon.stop()
        files = sorted(glob.glob(os.path.join(trace_dir, "*.jsonl")))
        self.assertEqual(len(files), 2)
        self.assertEqual(os.path.getsize(files[0]), cut)
        again = simulate_json(self, self.daemon.conf, self.daemon.conf)
        self.assertGreater(again["trace"]["samples"], result["trace"]["samples"])
        self.assertEqual(again["trace"]["cut_lines"], 1)
        self.assertEqual(again["trace"]["files"], 2)


if __name__ == "__main__":
    lgtest.run_tests()
