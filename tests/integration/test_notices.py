"""Notices in enforce mode, end to end: the real daemon throttles and
stops real test users' programs and tells them on a real pty, by mail
through a capturing sendmail, and for their next login (issue: notices
acceptance).  The desktop channel's own tests are in
test_notify_channels.py; its wiring is the same as the others'."""

import email
import io
import json
import os
import shlex
import struct
import subprocess
import time

import lgtest
from lgtest import wait_for

SAMPLE = 0.5
WINDOW = 2.0
# spin 2 gets a core when one other session takes the other, and more
# than the threshold with five other sessions wanting a core each.
CPU = 0.3               # cores, the violation threshold
THROTTLE = 0.15         # cores, level 1
HANG = lgtest.HANG
FLAG_TIMEOUT = WINDOW + HANG
# Hostile but honest arguments: what a user's real command line may hold.
HOSTILE_ARGS = ["a b", "it's", '"q"', "$(touch /tmp/lgtest-owned)", "`id`", "x\ny", "", "*"]


def policy(parent, workdir, **notify):
    """The policy of the notices' tests; notify adds [notify] keys."""
    return lgtest.policy(
        lgtest.enforcing(parent, workdir, stop_grace="1s", sample_interval=f"{SAMPLE:g}s"),
        violation=lgtest.violation(CPU, WINDOW),
        levels=[lgtest.level("throttled", cpu=THROTTLE, memory="1G", stop=False,
                             duration="10m"),
                lgtest.level("restricted", cpu=0.1, stop=True, duration="10m"),
                lgtest.level(duration="10m")],
        notify=dict({"channels": "tty, email, login",
                     "sendmail": f"{workdir}/sendmail -i -t",
                     "email_domain": "example.org",
                     "rate_limit": "1h",
                     "batch_partition": "compute",
                     "interactive_partition": "debug",
                     "docs_url": "https://hpc.example.org/login-nodes"}, **notify))


# A capturing sendmail: each message into its own file, argv on line one.
SENDMAIL = """#!/bin/sh
n=$(date +%s%N)
{ printf '%s\\n' "$*"; cat; } > "$(dirname "$0")/mail/$n.$$"
"""


class Notices(lgtest.DaemonTestCase):
    @classmethod
    def policy(cls):
        return policy(cls.parent, cls.workdir)

    @classmethod
    def daemon_rules(cls):
        return [{"name": "test-miner", "class": "forbidden", "exe": f"{cls.workdir}/lgminer*"}]

    @classmethod
    def prepare(cls):
        os.makedirs(f"{cls.workdir}/notices")
        os.makedirs(f"{cls.workdir}/mail")
        with open(f"{cls.workdir}/sendmail", "w") as f:
            f.write(SENDMAIL)
        os.chmod(f"{cls.workdir}/sendmail", 0o755)
        # The site's own forbidden notice, replacing the shipped one; its
        # subject carries the program's name, as a site may well choose.
        with open(f"{cls.workdir}/notices/forbidden.txt", "w") as f:
            f.write("Subject: {program} was stopped on {host}\n\n"
                    "SITE TEMPLATE: {program} ({pid}) is not allowed here. {action}.\n")

    def mails_to(self, address):
        mails = []
        for name in sorted(os.listdir(f"{self.workdir}/mail")):
            text = lgtest.read(f"{self.workdir}/mail/{name}")
            head = text.split("\n\n", 1)[0]
            if f"To: {address}" in head.split("\n"):
                mails.append(text)
        return mails

    def run_forbidden(self, user, times):
        """The forbidden program, started and stopped `times` times."""
        name = "lgminer\nBcc: evil@example.org"
        miner = lgtest.private_copy(lgtest.SPIN, self.workdir, name)
        for _ in range(times):
            mark = self.daemon.mark()
            # Next to nothing of CPU: stopped as forbidden, never over the
            # threshold (which would make it another kind of notice).
            p = self.procs.start([miner, "1", "0.05"], user)
            self.daemon.wait_event(HANG, after=mark, event="forbidden_process", uid=user.pw_uid)
            wait_for(lambda: p.poll() is not None, HANG, "the forbidden program to be stopped")

    def test_throttled_user_reads_the_notice_on_their_terminal(self):
        user = self.users.add("lgtest20")
        master, tty = lgtest.user_pty(self, user)
        hog = self.procs.start([self.spin, "2", "1", "300"] + HOSTILE_ARGS, user, tty=tty)
        with open(f"/proc/{hog.pid}/cmdline", "rb") as f:
            argv = f.read()
        violation = self.daemon.wait_event(FLAG_TIMEOUT, event="violation", uid=user.pw_uid)
        self.daemon.wait_event(HANG, event="notice", channel="tty", outcome="sent",
                               uid=user.pw_uid)
        text = lgtest.read_terminal(master, b"sbatch", HANG)
        until = time.strftime("%H:%M", time.localtime(lgtest.iso_to_epoch(violation["until"])))
        for expected in ("spin", str(hog.pid), f"{THROTTLE:g} core", until, "-p compute",
                         "-p debug", "https://hpc.example.org/login-nodes"):
            self.assertIn(expected, text)
        # The --wrap command, unquoted by a real shell and run by sh -c,
        # is the program's own argv, byte for byte.
        wrap = self.wrap_value(text)
        out = subprocess.run(["/bin/sh", "-c", f"set -- {wrap}; printf '%s\\0' \"$@\""],
                             capture_output=True, check=True).stdout
        self.assertEqual(out, argv)
        self.assertFalse(os.path.exists("/tmp/lgtest-owned"))

    @staticmethod
    def wrap_value(text):
        """The word after --wrap in the sbatch line, unquoted by a real
        shell.  shlex only finds where the word starts and ends."""
        line = io.StringIO(text[text.index("sbatch "):])
        lex = shlex.shlex(line, posix=True)
        lex.whitespace_split = True
        lex.commenters = ""
        for word in lex:
            if word == "--wrap":
                start = line.tell()
                lex.get_token()
                raw = line.getvalue()[start:line.tell()].strip()
                return subprocess.run(["/bin/sh", "-c", "printf %s " + raw], capture_output=True,
                                      check=True).stdout.decode()
        raise AssertionError(f"no --wrap in {text!r}")

    def test_forbidden_program_mail_has_one_recipient_and_no_injected_header(self):
        user = self.users.add("lgtest21")
        self.run_forbidden(user, 1)
        self.daemon.wait_event(HANG, event="notice", channel="email", outcome="sent",
                               uid=user.pw_uid)
        mails = self.mails_to("lgtest21@example.org")
        self.assertEqual(len(mails), 1)
        head, body = mails[0].split("\n\n", 1)
        headers = head.split("\n")[1:]      # line one is sendmail's argv
        self.assertEqual([h for h in headers if h.lower().startswith("to:")],
                         ["To: lgtest21@example.org"])
        self.assertFalse([h for h in headers if h.lower().startswith(("bcc:", "cc:"))], head)
        self.assertIn("SITE TEMPLATE", body, "the site's template replaces the shipped one")

    def test_the_same_violation_ten_times_sends_one_notice(self):
        user = self.users.add("lgtest22")
        mark = self.daemon.mark()
        self.run_forbidden(user, 10)
        # The last stop's notice event may follow its process's end.
        def held():
            return self.daemon.find(mark, event="notice", channel="all", uid=user.pw_uid)
        wait_for(lambda: len(held()) >= 9, HANG, "nine rate-limited notices")
        self.assertEqual([e["outcome"] for e in held()], ["rate_limited"] * 9)
        sent = self.daemon.find(mark, event="notice", channel="email", uid=user.pw_uid)
        self.assertEqual([e["outcome"] for e in sent], ["sent"])
        self.assertEqual(len(self.mails_to("lgtest22@example.org")), 1)

    def test_forgiven_user_is_told_of_the_next_violation(self):
        # Forgiven, the slate is clean: the rate limit of the notice sent
        # before does not hide the next one.
        user = self.users.add("lgtest53")
        self.run_forbidden(user, 1)
        self.daemon.wait_event(HANG, event="notice", channel="email", outcome="sent",
                               uid=user.pw_uid)
        self.daemon.ctl("forgive", user.pw_name, "--reason", "test")
        mark = self.daemon.mark()
        self.run_forbidden(user, 1)
        self.daemon.wait_event(HANG, after=mark, event="notice", channel="email",
                               outcome="sent", uid=user.pw_uid)
        self.assertEqual(len(self.mails_to("lgtest53@example.org")), 2)

    def test_notice_is_kept_for_the_next_login(self):
        user = self.users.add("lgtest23")
        self.run_forbidden(user, 1)
        self.daemon.wait_event(HANG, event="notice", channel="login", outcome="sent",
                               uid=user.pw_uid)
        path = f"{self.workdir}/login-notices/{user.pw_uid}.json"
        kept = json.loads(lgtest.read(path))["notices"]
        self.assertEqual([(n["kind"], n["read"]) for n in kept], [("forbidden", False)])
        self.assertIn("SITE TEMPLATE", kept[0]["body"])
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)


class ChartedMail(lgtest.DaemonTestCase):
    """[notify] email_chart = yes: the daemon's mail child draws the
    user's hour, and the mail's text is the same as without it."""

    @classmethod
    def policy(cls):
        return policy(cls.parent, cls.workdir, email_chart="yes")

    daemon_rules = classmethod(Notices.daemon_rules.__func__)
    prepare = classmethod(Notices.prepare.__func__)
    mails_to = Notices.mails_to
    run_forbidden = Notices.run_forbidden

    def test_mail_carries_the_users_hour_after_the_same_text(self):
        user = self.users.add("lgtest53")
        self.run_forbidden(user, 1)
        self.daemon.wait_event(HANG, event="notice", channel="email", outcome="sent",
                               uid=user.pw_uid)
        mails = self.mails_to("lgtest53@example.org")
        self.assertEqual(len(mails), 1)
        message = email.message_from_string(mails[0].split("\n", 1)[1])
        self.assertEqual(message.get_content_type(), "multipart/mixed")
        self.assertEqual(message.get_all("To"), ["lgtest53@example.org"])
        self.assertIsNone(message.get("Bcc"))
        text, image = message.get_payload()
        self.assertEqual(text.get_content_type(), "text/plain")
        self.assertIn("SITE TEMPLATE", text.get_payload(decode=True).decode())
        png = image.get_payload(decode=True)
        self.assertEqual((image.get_content_type(), png[:8]), ("image/png", b"\x89PNG\r\n\x1a\n"))
        self.assertEqual(struct.unpack(">II", png[16:24]), (480, 150))


if __name__ == "__main__":
    lgtest.run_tests()
