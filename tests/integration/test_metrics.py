"""The daemon's metrics for real: with a test user throttled in enforce
mode, `loginguardctl metrics` and [daemon] metrics_file both pass
promtool's check and show the user's level and the counts of what was
done and told, as the event log has them; a user who is no admin is
refused; the file is replaced whole at every sample, never written
through a link (issue: loginguardctl metrics and metrics_file)."""

import json
import os
import re
import shutil
import subprocess
import threading

import lgtest
from lgtest import wait_for

SAMPLE = 0.5
WINDOW = 2.0
CPU = 0.5        # cores, the violation threshold (spin 2 gets twice that on a busy node)
THROTTLE = 0.25  # cores, level 1: below CPU, so a throttled hog is not flagged again
ADMIN_GROUP = "lgtestadm"
HANG = lgtest.HANG
FLAG_TIMEOUT = WINDOW + HANG
CTL = os.path.join(lgtest.TOP_BUILDDIR, "tools", "loginguardctl")
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"

# The text format as Prometheus reads it: a name, labels whose values
# know three escapes (\\, \", \n), a value.
LABEL = r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"'
SAMPLE_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(' + LABEL + r'(?:,' + LABEL +
                         r')*)\})? (\S+)$')


def unescape(value):
    return re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


def parse(text):
    """{(name, ((label, value), ...)): value} of every sample; raises on
    any line the format does not allow."""
    assert text.endswith("\n"), "the text does not end with a newline"
    samples = {}
    for line in text[:-1].split("\n"):
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            continue
        m = SAMPLE_LINE.match(line)
        assert m, f"not a sample line: {line!r}"
        labels = tuple((k, unescape(v)) for k, v in re.findall(LABEL, m.group(2) or ""))
        samples[(m.group(1), labels)] = float(m.groups()[-1])
    return samples


def promtool_check(text):
    p = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=HANG)
    return p.returncode, p.stdout + p.stderr


class Metrics(lgtest.DaemonTestCase):
    @classmethod
    def policy(cls):
        return lgtest.policy(lgtest.enforcing(cls.parent, cls.workdir, admin_group=ADMIN_GROUP,
                                              metrics_file=cls.metrics_file,
                                              sample_interval=f"{SAMPLE:g}s"),
                             **lgtest.throttle_policy(CPU, WINDOW, THROTTLE))

    @classmethod
    def prepare(cls):
        cls.ctl_bin = lgtest.private_copy(CTL, cls.workdir, "loginguardctl")
        cls.socket = f"{cls.workdir}/control.sock"
        # As node_exporter's textfile directory would be.
        os.makedirs(f"{cls.workdir}/textfile")
        cls.metrics_file = f"{cls.workdir}/textfile/loginguard.prom"

    def ctl(self, *args, user=None):
        def become():
            os.setgroups([])
            os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
            os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
        p = subprocess.run([self.ctl_bin, "--socket", self.socket] + list(args),
                           capture_output=True, text=True, timeout=HANG,
                           preexec_fn=become if user else None, cwd="/")
        return p.returncode, p.stdout, p.stderr

    def throttled_hog(self, name):
        user = self.users.add(name)
        self.procs.start([self.spin, "2"], user)
        self.assert_full_window(self.daemon.wait_event(FLAG_TIMEOUT, event="violation",
                                                       uid=user.pw_uid), WINDOW, CPU)
        self.daemon.wait_event(HANG, event="limits_set", uid=user.pw_uid, level=1)
        return user

    def user_value(self, samples, family, user):
        return samples.get((family, (("user", user.pw_name), ("uid", str(user.pw_uid)))))

    def test_a_throttled_user_and_what_was_done_show_in_both(self):
        user = self.throttled_hog("lgtest1")
        # The notices of the level (tty: no terminal, skipped; login: kept).
        self.daemon.wait_event(HANG, event="notice", uid=user.pw_uid, channel="login")
        wait_for(lambda: os.path.exists(self.metrics_file), HANG, "the metrics file")
        code, text, err = self.ctl("metrics")
        self.assertEqual(code, 0, err)
        events = self.daemon.events()
        rc, said = promtool_check(text)
        self.assertEqual(rc, 0, said)
        with open(self.metrics_file) as f:
            from_file = f.read()
        rc, said = promtool_check(from_file)
        self.assertEqual(rc, 0, f"{self.metrics_file}: {said}")
        self.assertEqual(os.stat(self.metrics_file).st_mode & 0o7777, 0o644)
        print(f"metrics: {len(text)} bytes, {text.count(chr(10))} lines")

        for name, samples in (("loginguardctl metrics", parse(text)),
                              ("metrics_file", parse(from_file))):
            with self.subTest(source=name):
                self.assertEqual(self.user_value(samples, "loginguard_user_level", user), 1)
                # A busy user's usage shows (how much of a core a throttled
                # hog gets is the machine's business).
                self.assertGreater(self.user_value(samples, "loginguard_user_cpu_cores", user),
                                   0)
                self.assertEqual(self.user_value(samples, "loginguard_user_exempt", user), 0)
                self.assertEqual(samples[("loginguard_mode", (("mode", "enforce"),))], 1)
                self.assertEqual(samples[("loginguard_enforcing", ())], 1)
                self.assertEqual(samples[("loginguard_level_info",
                                          (("level", "1"), ("name", "throttled")))], 1)
                self.assertGreater(samples[("loginguard_sample_duration_seconds_count", ())], 2)

        # The counters say what the event log says (nothing changes between
        # the two reads: the level lasts 10 minutes, and no one else runs).
        samples = parse(text)
        level_limits = [e for e in events if e["event"] == "limits_set" and e["level"] >= 1]
        self.assertEqual(len(level_limits), 1)
        self.assertEqual(samples[("loginguard_actions_total",
                                  (("action", "limits_level"), ("outcome", "done")))], 1)
        notices = {}
        for e in events:
            if e["event"] == "notice":
                key = (e["kind"], e["channel"], e["outcome"])
                notices[key] = notices.get(key, 0) + 1
        self.assertIn(("throttled", "login", "sent"), notices)
        for (kind, channel, outcome), count in notices.items():
            self.assertEqual(samples[("loginguard_notices_total",
                                      (("kind", kind), ("channel", channel),
                                       ("outcome", outcome)))], count)
        self.assertEqual(samples[("loginguard_notices_total",
                                  (("kind", "stopped"), ("channel", "login"),
                                   ("outcome", "sent")))], 0)

        # --json: the reply, with the same text inside.
        code, out, err = self.ctl("--json", "metrics")
        self.assertEqual(code, 0, err)
        reply = json.loads(out)
        self.assertTrue(reply["ok"])
        self.assertIn("# TYPE loginguard_user_level gauge\n", reply["metrics"])

    def test_a_user_who_is_no_admin_is_refused_and_an_admin_is_not(self):
        user = self.users.add("lgtest2")
        mark = self.daemon.mark()
        code, out, err = self.ctl("metrics", user=user)
        self.assertEqual(code, 1, f"{out} {err}")
        self.assertEqual(out, "")
        self.assertIn(f"metrics needs root or membership of the group {ADMIN_GROUP}", err)
        event = self.daemon.wait_event(HANG, after=mark, event="control_refused",
                                       uid=user.pw_uid)
        self.assertEqual((event["by_uid"], event["request"]), (user.pw_uid, "metrics"))
        admin = self.users.add(ADMIN_GROUP)  # its own group: a member of admin_group
        code, out, err = self.ctl("metrics", user=admin)
        self.assertEqual(code, 0, err)
        self.assertIn("loginguard_build_info{version=", out)

    def test_the_file_is_replaced_whole_and_never_through_a_link(self):
        wait_for(lambda: os.path.exists(self.metrics_file), HANG, "the metrics file")
        # A reader that never stops reading sees whole files only, each a
        # new inode (renamed over the last), while the daemon writes one a
        # sample.
        reads, inodes, broken = [0], set(), []
        stop = threading.Event()

        def reader():
            while not stop.is_set():
                with open(self.metrics_file) as f:
                    inodes.add(os.fstat(f.fileno()).st_ino)
                    text = f.read()
                try:
                    parse(text)
                    assert text.startswith("# HELP loginguard_build_info ")
                    assert "\nloginguard_events_lost_total " in text
                except AssertionError as e:
                    broken.append(str(e))
                reads[0] += 1
        t = threading.Thread(target=reader)
        t.start()
        try:
            wait_for(lambda: len(inodes) >= 4, HANG, "four files in turn")
        finally:
            stop.set()
            t.join()
        print(f"{reads[0]} reads of {len(inodes)} files, none partial")
        self.assertEqual(broken, [])

        # A link planted where the temporary file goes is removed, and
        # what it points at is left as it was.
        victim = f"{self.workdir}/victim"
        with open(victim, "w") as f:
            f.write("keep\n")
        os.symlink(victim, self.metrics_file + ".tmp")
        before = os.stat(self.metrics_file).st_ino
        wait_for(lambda: os.stat(self.metrics_file).st_ino != before, HANG, "the next file")
        self.assertEqual(lgtest.read(victim), "keep\n")
        self.assertFalse(os.path.islink(self.metrics_file))
        self.assertEqual(promtool_check(lgtest.read(self.metrics_file))[0], 0)


if __name__ == "__main__":
    lgtest.run_tests()
