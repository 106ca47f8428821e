"""loginguardctl events on the real daemon's event log: --follow prints
each new event (how soon after it is written: make bench prints it) and
keeps following through a logrotate-style rename and the daemon's SIGHUP,
and through a copytruncate; --user, --kind and --since pick the events,
--since from the rotated (and compressed) copies too; a user who may not
read the log is told what it takes, with exit status 4; and it all works
with the daemon stopped."""

import gzip
import json
import os
import shutil
import signal
import subprocess
import threading
import time

import lgtest
from lgtest import wait_for

CTL = os.path.join(lgtest.TOP_BUILDDIR, "tools", "loginguardctl")
HANG = lgtest.HANG


class Follower:
    """loginguardctl events --follow ..., its lines taken as they come."""

    def __init__(self, conf, *args):
        self.lines = []
        self.proc = subprocess.Popen([CTL, "--config", conf, "events", "--follow"] + list(args),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     bufsize=1)
        self.thread = threading.Thread(target=self.take, daemon=True)
        self.thread.start()

    def take(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def reasons(self):
        return [json.loads(line).get("reason") for line in self.lines]

    def wait_lines(self, n):
        wait_for(lambda: len(self.lines) >= n or self.proc.poll() is not None, HANG,
                 f"{n} lines from loginguardctl events --follow")
        self.assertions_alive()
        return self.lines[:n]

    def assertions_alive(self):
        if self.proc.poll() is not None:
            raise AssertionError(f"the follower ended: {self.proc.returncode}, "
                                 f"{self.proc.stderr.read()}")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=HANG)
        self.thread.join(timeout=HANG)
        err = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return err


class EventsCase(lgtest.DaemonTestCase):
    @classmethod
    def policy(cls):
        return lgtest.policy(lgtest.observing(cls.parent, cls.workdir), notify={"channels": ""})

    def ctl(self, *args, user=None):
        def become():
            os.setgroups([])
            os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
            os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
        p = subprocess.run([self.ctl_bin, "--config", self.daemon.conf] + list(args),
                           capture_output=True, text=True, timeout=HANG,
                           preexec_fn=become if user else None, cwd="/")
        return p.returncode, p.stdout, p.stderr

    def events_json(self, *args):
        code, out, err = self.ctl("events", "--json", *args)
        self.assertEqual(code, 0, err)
        return [json.loads(line) for line in out.splitlines()]

    def forgive(self, name, reason="test"):
        code, out, err = self.ctl("forgive", name, "--reason", reason)
        self.assertEqual(code, 0, err)

    @classmethod
    def prepare(cls):
        cls.ctl_bin = lgtest.private_copy(CTL, cls.workdir, "loginguardctl")

    def log_fds(self):
        """Where the daemon's descriptors on event logs point."""
        fds = f"/proc/{self.daemon.proc.pid}/fd"
        targets = []
        for fd in os.listdir(fds):
            try:
                targets.append(os.readlink(os.path.join(fds, fd)))
            except FileNotFoundError:
                pass
        return [t for t in targets if "events.jsonl" in t]

    def rotate(self, compress=False):
        """What logrotate does with `create` (and `compress` without
        `delaycompress`): rename, make a new log, and SIGHUP the daemon;
        returns when the daemon writes the new log."""
        log = self.daemon.events_path
        os.rename(log, log + ".1")
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
        os.close(fd)
        # Written between the rename and the SIGHUP: to the old file.
        between = "between rename and SIGHUP"
        self.forgive(self.user.pw_name, between)
        self.daemon.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: self.log_fds() == [log], HANG, "the daemon to reopen its event log")
        if compress:
            with open(log + ".1", "rb") as src, gzip.open(log + ".1.gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.unlink(log + ".1")
        return between


def next_second():
    """Sleep to the next whole second; it, as --since takes a local time."""
    t = int(time.time()) + 1
    time.sleep(max(t - time.time(), 0))
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


class Follow(EventsCase):
    def test_follow_prints_each_event_and_survives_rotation(self):
        self.user = self.users.add("lgtest70")
        follower = Follower(self.daemon.conf, "--json", "--user", "lgtest70",
                            "--kind", "user_forgiven")
        try:
            # The follower is ready once it prints: forgive until it does.
            # Every forgive after the first it prints is printed too: wait
            # for the last, so that none comes after what follows.
            tries = []
            def ready():
                if follower.lines:
                    return True
                tries.append(f"ready? {len(tries)}")
                self.forgive("lgtest70", tries[-1])
            wait_for(ready, HANG, "the follower to start")
            wait_for(lambda: tries[-1] in follower.reasons(), HANG, "the last ready? line")
            seen = len(follower.lines)
            # Each event, in turn, once it is written.
            for i in range(10):
                self.forgive("lgtest70", f"event {i}")
                follower.wait_lines(seen + 1)
                seen += 1
                self.assertEqual(follower.reasons()[-1], f"event {i}")

            between = self.rotate()
            self.forgive("lgtest70", "after SIGHUP")
            follower.wait_lines(seen + 2)
            self.assertEqual(follower.reasons()[seen:], [between, "after SIGHUP"])
            seen += 2

            # copytruncate: copied, cut to nothing, the daemon writes on.
            log = self.daemon.events_path
            shutil.copy(log, log + ".2")
            os.truncate(log, 0)
            self.forgive("lgtest70", "after copytruncate")
            follower.wait_lines(seen + 1)
            self.assertEqual(follower.reasons()[seen:], ["after copytruncate"])
            seen += 1
            # Each event once, nothing else (the filter held throughout).
            self.assertEqual(len(follower.lines), seen)
        finally:
            err = follower.stop()
        self.assertEqual(err, "")


class Filters(EventsCase):
    def test_user_kind_and_since_pick_events_across_rotated_copies(self):
        self.user = self.users.add("lgtest71")
        b = self.users.add("lgtest72")
        start = next_second()  # after the other tests' events
        self.forgive("lgtest71", "one")
        code, out, err = self.ctl("exempt", "lgtest72", "--for", "1h", "--reason", "two")
        self.assertEqual(code, 0, err)
        between = self.rotate(compress=True)
        self.assertTrue(os.path.exists(self.daemon.events_path + ".1.gz"))
        cut = next_second()
        self.forgive("lgtest71", "three")
        code, out, err = self.ctl("exempt", "lgtest72", "--remove")
        self.assertEqual(code, 0, err)

        reasons = lambda events: [e.get("reason") for e in events]
        # Without --since, the log itself; with it, its rotated copies too.
        self.assertEqual(reasons(self.events_json("--user", "lgtest71")), ["three"])
        self.assertEqual(reasons(self.events_json("--user", "lgtest71", "--since", "1h")),
                         ["one", between, "three"])
        self.assertEqual(reasons(self.events_json("--user", str(b.pw_uid), "--since", "1h")),
                         ["two", None])
        self.assertEqual([e["event"] for e in self.events_json(
                          "--since", start, "--kind", "exempt_added,exempt_removed",
                          "--kind", "user_forgiven")],
                         ["user_forgiven", "exempt_added", "user_forgiven", "user_forgiven",
                          "exempt_removed"])
        self.assertEqual(reasons(self.events_json("--since", cut, "--kind", "user_forgiven")),
                         ["three"])
        started = self.events_json("--since", "1h", "--kind", "daemon_started")
        self.assertEqual(len(started), 1)
        self.assertNotIn("uid", started[0])

        # The table: one row an event, local time, the user, what happened.
        code, out, err = self.ctl("events", "--user", "lgtest71")
        self.assertEqual(code, 0, err)
        rows = out.splitlines()
        self.assertRegex(rows[0], r"^TIME\s+USER\s+EVENT\s+DETAILS$")
        self.assertEqual(len(rows), 2)
        self.assertRegex(rows[1], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  lgtest71\s+user_forgiven\s+"
                                  r"level 0 -> 0; by root; reason three$")

        # Usage errors: exit status 2, with what is known.
        code, out, err = self.ctl("events", "--kind", "violations")
        self.assertEqual(code, 2)
        self.assertIn("violation, level_expired", err)
        code, out, err = self.ctl("events", "--since", "last week")
        self.assertEqual(code, 2)
        self.assertIn("--since", err)

    def test_text_a_user_chose_cannot_act_on_the_terminal(self):
        self.users.add("lgtest73")
        # C1 and bidirectional controls pass the daemon's check of a reason.
        self.forgive("lgtest73", "ok\u202egnp.exe \u009b2J")
        code, out, err = self.ctl("events", "--user", "lgtest73")
        self.assertEqual(code, 0, err)
        self.assertIn("reason ok\\xe2\\x80\\xaegnp.exe \\xc2\\x9b2J", out)
        self.assertNotIn("\u202e", out)
        self.assertNotIn("\u009b", out)
        # --json passes the line on as the daemon wrote it (JSON escapes it).
        code, out, err = self.ctl("events", "--json", "--user", "lgtest73")
        with open(self.daemon.events_path) as f:
            self.assertIn(out, f.read())

    def test_a_user_who_may_not_read_the_log_is_told_what_it_takes(self):
        user = self.users.add("lgtest74")
        os.chmod(self.daemon.events_path, 0o640)
        code, out, err = self.ctl("events", user=user)
        self.assertEqual(code, 4, err)
        self.assertEqual(out, "")
        self.assertIn(f"cannot read the event log {self.daemon.events_path}: Permission denied",
                      err)
        self.assertIn("needs root or membership of the group root", err)
        code, out, err = self.ctl("events", "--follow", user=user)
        self.assertEqual(code, 4, err)


class Stopped(EventsCase):
    def test_the_log_is_read_with_the_daemon_stopped(self):
        self.users.add("lgtest75")
        self.forgive("lgtest75", "before the stop")
        self.daemon.stop()
        self.assertEqual(self.ctl("status")[0], 3)  # not reachable
        events = self.events_json("--since", "1h")
        self.assertEqual([e["event"] for e in events][-2:], ["user_forgiven", "daemon_stopped"])
        self.assertEqual(events[-2]["reason"], "before the stop")


if __name__ == "__main__":
    lgtest.run_tests()
