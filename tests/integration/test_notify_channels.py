"""The channels that carry a notice to a user, each on the real thing
(issue: notices, channel acceptance): real ptys with real test users'
processes on them, a private session bus with python3-dbusmock's
notification daemon on it, and a capturing sendmail.  The channels are
called through tests/helpers/lg-notify, which links libloginguard."""

import os
import email
import fcntl
import re
import select
import signal
import socket
import struct
import subprocess
import termios
import time
import unittest

import lgtest
from lgtest import Processes, wait_for

NOTIFY = os.path.join(lgtest.TOP_BUILDDIR, "tests", "helpers", "lg-notify")
HANG = lgtest.HANG
# The most a pty master's line discipline holds unread (N_TTY_BUF_SIZE - 1).
N_TTY_HOLDS = 4095


def lg_notify(*args, stdin=None):
    """Run the driver; its one line of output (and how long it took).
    A call that blocks is caught by the hang guard (HANG); how long a
    call takes is not asserted here (make bench prints it)."""
    start = time.monotonic()
    r = subprocess.run([NOTIFY] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=HANG, input=stdin)
    elapsed = time.monotonic() - start
    assert r.returncode == 0, f"lg-notify {args[0]} exited {r.returncode}: {r.stderr}"
    return r.stdout.strip(), elapsed


def unread(fd):
    """Bytes waiting to be read on fd."""
    return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]


class Tty(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        lgtest.Fixture.of(cls)
        cls.alice = cls.users.add("lgtestalice")
        cls.bob = cls.users.add("lgtestbob")

    def setUp(self):
        self.procs = Processes()
        self.fds = []

    def tearDown(self):
        self.procs.stop_all()
        for fd in self.fds:
            os.close(fd)
        lgtest.assert_none_left(self.users.uids(), self.id())

    def pty(self, owner):
        """A pty pair whose terminal owner owns, as after owner's login."""
        master, slave = os.openpty()
        self.fds += [master, slave]
        path = os.ttyname(slave)
        os.chown(path, owner.pw_uid, -1)
        return master, slave, path

    def login_on(self, slave, user):
        """A process of user's with the terminal as its controlling tty."""
        return self.procs.start(["sleep", "600"], user=user, tty=os.ttyname(slave)).pid

    def read_until(self, master, needle):
        data = b""
        deadline = time.monotonic() + HANG
        while needle not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{needle!r} not read from the pty in {HANG}s: {data!r}")
            if select.select([master], [], [], left)[0]:
                data += os.read(master, 65536)
        return data

    def assert_never_written(self, master, slave, text):
        """What the terminal got is in order: a marker written after the
        call comes first only if the call wrote nothing."""
        os.write(slave, b"MARKER-AFTER-CALL\n")
        data = self.read_until(master, b"MARKER-AFTER-CALL")
        self.assertNotIn(text.encode(), data)
        self.assertTrue(data.startswith(b"MARKER-AFTER-CALL"), data)

    def test_users_controlling_tty_is_written(self):
        master, slave, _ = self.pty(self.alice)
        pid = self.login_on(slave, self.alice)
        out, _ = lg_notify("tty", self.alice.pw_uid,
                           "loginguard: your program\n\x1b]0;pwned\x07sim was stopped", pid)
        self.assertEqual(out, "written=1 skipped=0")
        data = self.read_until(master, b"was stopped")
        self.assertIn(b"loginguard: your program\r", data)
        # No control sequence from a process name reaches the terminal.
        self.assertNotIn(b"\x1b", data)
        self.assertNotIn(b"\x07", data)
        self.assertIn(b"]0;pwnedsim was stopped", data)

    def test_tty_of_another_user_is_never_written(self):
        master, slave, _ = self.pty(self.bob)
        pid = self.login_on(slave, self.alice)  # alice's process on bob's terminal
        out, _ = lg_notify("tty", self.alice.pw_uid, "NOTICE-FOR-ALICE", pid)
        self.assertEqual(out, "written=0 skipped=1")
        self.assert_never_written(master, slave, "NOTICE-FOR-ALICE")

    def test_process_of_another_user_is_passed_over(self):
        master, slave, _ = self.pty(self.alice)
        pid = self.login_on(slave, self.bob)  # bob's process on alice's terminal
        out, _ = lg_notify("tty", self.alice.pw_uid, "NOTICE-FOR-ALICE", pid)
        self.assertEqual(out, "written=0 skipped=0")
        self.assert_never_written(master, slave, "NOTICE-FOR-ALICE")

    def utmp_with(self, name, line, user):
        path = os.path.join(self.workdir, name)
        open(path, "wb").close()  # glibc writes to an existing utmp file only
        subprocess.run([NOTIFY, "utmp-add", path, line, user.pw_name, str(os.getpid())], check=True)
        return path

    def test_terminal_from_utmp_is_written(self):
        master, _, path = self.pty(self.alice)
        utmp = self.utmp_with("utmp-login", path[len("/dev/"):], self.alice)
        out, _ = lg_notify("tty", "--utmp", utmp, self.alice.pw_uid, "NOTICE-VIA-UTMP")
        self.assertEqual(out, "written=1 skipped=0")
        self.read_until(master, b"NOTICE-VIA-UTMP")

    def test_terminal_reached_through_a_link_is_never_written(self):
        master, slave, path = self.pty(self.alice)
        name = path[len("/dev/"):]  # pts/N
        utmp = self.utmp_with("utmp-link", name, self.alice)
        # A /dev whose pts directory is a link to the real one ...
        linked_dir = os.path.join(self.workdir, "dev-dirlink")
        os.makedirs(linked_dir, exist_ok=True)
        os.symlink("/dev/pts", os.path.join(linked_dir, "pts"))
        # ... and one whose pts/N is a link to the real terminal.
        linked_tty = os.path.join(self.workdir, "dev-ttylink")
        os.makedirs(os.path.join(linked_tty, "pts"), exist_ok=True)
        os.symlink(path, os.path.join(linked_tty, name))
        for dev in (linked_dir, linked_tty):
            out, _ = lg_notify("tty", "--dev", dev, "--utmp", utmp, self.alice.pw_uid, "LINKED")
            self.assertEqual(out, "written=0 skipped=1", dev)
        # A utmp line that would climb out of /dev is no terminal name.
        utmp = self.utmp_with("utmp-climb", "../dev/" + name, self.alice)
        out, _ = lg_notify("tty", "--utmp", utmp, self.alice.pw_uid, "LINKED")
        self.assertEqual(out, "written=0 skipped=1")
        self.assert_never_written(master, slave, "LINKED")

    def test_full_terminal_does_not_block(self):
        # (How long the call takes: make bench prints it.)
        master, slave, _ = self.pty(self.alice)
        pid = self.login_on(slave, self.alice)
        # Nobody reads the master: fill the terminal until it takes no
        # more.  Once the master holds all its line discipline will, the
        # kernel moves nothing more out of the terminal's own buffer, so
        # a terminal full after that stays full.
        os.set_blocking(slave, False)
        filled = 0
        def full():
            nonlocal filled
            master_full = unread(master) >= N_TTY_HOLDS
            try:
                while True:
                    filled += os.write(slave, b"x" * 1024)
            except BlockingIOError:
                pass
            return master_full
        wait_for(full, HANG, "the terminal to fill", interval=0.01)
        self.assertGreater(filled, 4096)
        # A write that blocked would hang the call (the hang guard).
        out, _ = lg_notify("tty", self.alice.pw_uid, "NOTICE " * 100, pid)
        self.assertEqual(out, "written=0 skipped=1")

    def test_stopped_terminal_does_not_block(self):
        # (How long the call takes: make bench prints it.)
        master, slave, _ = self.pty(self.alice)
        pid = self.login_on(slave, self.alice)
        termios.tcflow(slave, termios.TCOOFF)  # as after ^S
        # Output stays stopped until ^Q: a write that blocked would hang
        # the call (the hang guard).
        out, _ = lg_notify("tty", self.alice.pw_uid, "STOPPED", pid)
        self.assertEqual(out, "written=0 skipped=1")
        termios.tcflow(slave, termios.TCOON)
        self.assert_never_written(master, slave, "STOPPED")


BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <!-- Root may connect too (the mock, the test), so that a child that
         had stayed root would get through and be seen. -->
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""

# Notify as the template has it, and the uids of every other connection
# on the bus while the call is being answered: libnotify's connection
# waits for this reply, so it is among them.  (Plain loops: dbusmock runs
# this with exec(), where a comprehension cannot see the local names.)
RECORDING_NOTIFY = """
self.peer_uids = []
for name in self.connection.list_names():
    if name.startswith(':') and name not in ({skip!r}, self.connection.get_unique_name()):
        self.peer_uids.append(int(self.connection.get_unix_user(name)))
ret = args[1] or 7
"""

NOTIFICATIONS = "org.freedesktop.Notifications"
MOCK_IFACE = "org.freedesktop.DBus.Mock"


class Desktop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import dbus
        lgtest.Fixture.of(cls)
        cls.alice = cls.users.add("lgtestalice")
        cls.bob = cls.users.add("lgtestbob")
        cls.procs = Processes()
        cls.runtime = cls.user_dir("run-alice", cls.alice)
        socket_path = os.path.join(cls.runtime, "bus")
        config = os.path.join(cls.workdir, "bus.conf")
        with open(config, "w") as f:
            f.write(BUS_CONFIG.format(socket=socket_path))
        cls.bus_pid = cls.procs.start(["dbus-daemon", f"--config-file={config}", "--nofork",
                                       "--nopidfile"], user=cls.alice).pid
        wait_for(lambda: os.path.exists(socket_path), HANG, "the session bus socket")
        address = f"unix:path={socket_path}"
        cls.mock_log = open(os.path.join(cls.workdir, "mock.log"), "w")
        cls.mock = subprocess.Popen(
            ["/usr/bin/python3", "-m", "dbusmock", "--template", "notification_daemon"],
            env={"DBUS_SESSION_BUS_ADDRESS": address, "PATH": os.environ["PATH"]},
            stdin=subprocess.DEVNULL, stdout=cls.mock_log, stderr=subprocess.STDOUT)
        cls.bus = dbus.bus.BusConnection(address)
        wait_for(lambda: cls.bus.name_has_owner(NOTIFICATIONS), HANG,
                 "the mock notification daemon")
        obj = cls.bus.get_object(NOTIFICATIONS, "/org/freedesktop/Notifications")
        cls.control = dbus.Interface(obj, MOCK_IFACE)
        cls.control.AddMethod(NOTIFICATIONS, "Notify", "susssasa{sv}i", "u",
                              RECORDING_NOTIFY.format(skip=cls.bus.get_unique_name()))
        cls.control.AddMethod(MOCK_IFACE, "GetPeerUids", "", "ai", "ret = self.peer_uids")

    @classmethod
    def tearDownClass(cls):
        cls.bus.close()
        cls.mock.send_signal(signal.SIGTERM)
        cls.mock.wait(timeout=HANG)
        cls.mock_log.close()
        cls.procs.stop_all()
        lgtest.assert_none_left(cls.users.uids(), cls.__name__)

    @classmethod
    def user_dir(cls, name, user):
        path = os.path.join(cls.workdir, name)
        os.mkdir(path, 0o700)
        os.chown(path, user.pw_uid, user.pw_gid)
        return path

    def setUp(self):
        self.control.ClearCalls()

    def tearDown(self):
        # What a test made (a desktop child) is gone; alice's bus stays
        # for the class.
        wait_for(lambda: set(lgtest.processes_of(self.users.uids())) <= {self.bus_pid}, HANG,
                 f"the processes of {self.id()} to end")

    def notify_calls(self):
        return [args for _, args in self.control.GetMethodCalls("Notify")]

    def test_notice_reaches_the_users_bus_as_the_user(self):
        out, _ = lg_notify("desktop", self.alice.pw_uid, self.runtime, "loginguard: CPU limit",
                           "Your program <sim> used 4 cores & more.\nUse sbatch.")
        self.assertEqual(out, "sent")
        calls = self.notify_calls()
        self.assertEqual(len(calls), 1, calls)
        app, _, _, summary, body, _, hints, _ = calls[0]
        self.assertEqual(app, "loginguard")
        self.assertEqual(summary, "loginguard: CPU limit")
        # The server reads markup (the template says so): the name is text.
        self.assertEqual(body, "Your program &lt;sim&gt; used 4 cores &amp; more.\nUse sbatch.")
        self.assertEqual(int(hints["urgency"]), 1)
        self.assertEqual(list(self.control.GetPeerUids()), [self.alice.pw_uid])

    def test_urgent_notice_is_critical(self):
        out, _ = lg_notify("desktop", "--urgent", self.alice.pw_uid, self.runtime, "stopped", "x")
        self.assertEqual(out, "sent")
        calls = self.notify_calls()
        self.assertEqual(len(calls), 1, calls)
        self.assertEqual(int(calls[0][6]["urgency"]), 2)

    def probe(self, *args):
        """lg-notify desktop as pid 1 of a new pid namespace: its probe
        child is pid 2 when the call made no process or thread."""
        r = subprocess.run(["unshare", "--pid", "--fork", NOTIFY, "desktop", "--probe-pid"] +
                           [str(a) for a in args], capture_output=True, text=True, timeout=HANG)
        self.assertEqual(r.returncode, 0, r.stderr)
        outcome, probe = r.stdout.strip().split("\n")
        return outcome, int(probe.split("=")[1])

    def test_no_session_bus_is_skipped_without_forking(self):
        # The probe sees a fork when there is one (the child, and GLib's
        # threads in it, took pids 2 and up).
        outcome, probe = self.probe(self.alice.pw_uid, self.runtime, "s", "b")
        self.assertEqual(outcome, "sent")
        self.assertGreater(probe, 2)
        empty = self.user_dir("run-empty", self.alice)
        dir_link = os.path.join(self.workdir, "run-dirlink")
        os.symlink(self.runtime, dir_link)
        bus_link = self.user_dir("run-buslink", self.alice)
        os.symlink(os.path.join(self.runtime, "bus"), os.path.join(bus_link, "bus"))
        for runtime, uid in ((empty, self.alice.pw_uid), (dir_link, self.alice.pw_uid),
                             (bus_link, self.alice.pw_uid), (self.runtime, self.bob.pw_uid)):
            # (How long a skip takes: make bench prints it.)
            outcome, probe = self.probe(uid, runtime, "s", "b")
            self.assertTrue(outcome.startswith("skipped: no session bus"), (runtime, outcome))
            self.assertEqual(probe, 2, runtime)
        self.assertEqual(len(self.notify_calls()), 1)  # the probe's own, no other

    def test_bus_that_never_answers_costs_only_the_timeout(self):
        # (How long the call takes past its timeout: make bench prints it.)
        runtime = self.user_dir("run-hung", self.bob)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(os.path.join(runtime, "bus"))
            os.chown(os.path.join(runtime, "bus"), self.bob.pw_uid, self.bob.pw_gid)
            listener.listen(8)  # connections wait in the backlog, never answered
            out, elapsed = lg_notify("desktop", "--timeout-ms", 1000, self.bob.pw_uid, runtime,
                                     "s", "b")
            # The child got as far as the bus (its connection waits in the
            # backlog), and its end is closed: it was stopped.
            listener.settimeout(HANG)
            conn, _ = listener.accept()
        finally:
            listener.close()
        with conn:
            conn.settimeout(HANG)
            while conn.recv(65536):
                pass
        # Stopped by its timeout, not by anything that came back.
        self.assertTrue(out.startswith("failed: the desktop notice to lgtestbob took more than "
                                       "1000 ms"), out)
        # It waited the timeout out: a lower bound that is the behaviour
        # (a bus slower than that but working gets its notice).
        self.assertGreaterEqual(elapsed, 1.0)
        # The child, the only process bob ever had, was killed and reaped.
        self.assertEqual(lgtest.processes_of({self.bob.pw_uid}), [])


class Email(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        lgtest.Fixture.of(cls, users=False)
        cls.capture = os.path.join(cls.workdir, "sendmail")
        with open(cls.capture, "w") as f:
            f.write(f"""#!/bin/sh
printf '%s\\n' "$@" > {cls.workdir}/argv
cat > {cls.workdir}/message
""")
        os.chmod(cls.capture, 0o755)

    def captured(self):
        with open(os.path.join(self.workdir, "argv")) as f:
            argv = f.read().splitlines()
        with open(os.path.join(self.workdir, "message"), encoding="utf-8") as f:
            message = f.read()
        headers, _, body = message.partition("\n\n")
        return argv, headers.split("\n"), body

    def test_mail_goes_to_the_address_with_no_injected_header(self):
        to, _ = lg_notify("address", "lgtestalice", "example.org")
        self.assertEqual(to, "lgtestalice@example.org")
        name = "sim\nBcc: evil@example.org"
        out, _ = lg_notify("email", f"{self.capture} -i -t", "loginguard <root@node1>", to,
                           f"loginguard: your program {name} was stopped",
                           f"Your program {name} used 4 cores.\n.\nsbatch --wrap 'sim'\n")
        self.assertEqual(out, "sent")
        argv, headers, body = self.captured()
        self.assertEqual(argv, ["-i", "-t"])
        names = [h.split(":", 1)[0].lower() for h in headers if not h.startswith((" ", "\t"))]
        self.assertEqual(names.count("to"), 1)
        self.assertNotIn("bcc", names)
        self.assertIn("To: lgtestalice@example.org", headers)
        self.assertIn("From: loginguard <root@node1>", headers)
        self.assertIn("Subject: loginguard: your program sim Bcc: evil@example.org was stopped",
                      headers)
        self.assertIn("Auto-Submitted: auto-generated", headers)
        self.assertIn("Content-Type: text/plain; charset=utf-8", headers)
        date = [h for h in headers if h.startswith("Date: ")]
        self.assertEqual(len(date), 1)
        self.assertRegex(date[0], r"^Date: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d [+-]\d{4}$")
        # In the body the name is plain text; a lone dot cannot end it early.
        self.assertEqual(body, "Your program sim\nBcc: evil@example.org used 4 cores.\n. \n"
                               "sbatch --wrap 'sim'\n")

    def test_chart_comes_inline_after_the_same_text(self):
        body = "Your program sim\nBcc: evil@example.org used 4 cores.\n.\nsbatch --wrap 'sim'\n"
        out, _ = lg_notify("email", self.capture, "root", "alice", "s", body)
        self.assertEqual(out, "sent")
        _, _, plain = self.captured()
        out, _ = lg_notify("email", "--chart", f"{self.capture} -i -t", "root", "alice", "s",
                           body)
        self.assertEqual(out, "sent")
        with open(os.path.join(self.workdir, "message"), "rb") as f:
            message = email.message_from_bytes(f.read())
        self.assertEqual(message.get_content_type(), "multipart/mixed")
        self.assertEqual(message.get_all("To"), ["alice"])
        parts = message.get_payload()
        self.assertEqual([p.get_content_type() for p in parts], ["text/plain", "image/png"])
        # The text part is the plain mail's body, byte for byte.
        self.assertEqual(parts[0].get_payload(decode=True).decode(), plain)
        self.assertEqual(parts[1].get_content_disposition(), "inline")
        self.assertEqual(parts[1].get_filename(), "usage.png")
        png = parts[1].get_payload(decode=True)
        self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
        self.assertEqual(struct.unpack(">II", png[16:24]), (480, 150))
        self.assertGreater(len(png), 3000)  # lines and labels, not a blank picture
        with open(os.path.join(self.workdir, "chart.png"), "wb") as f:
            f.write(png)
        keep = os.environ.get("LG_EMAIL_CHART")
        if keep:
            with open(keep, "wb") as f:
                f.write(png)

    def test_local_address_without_domain(self):
        self.assertEqual(lg_notify("address", "lgtestalice")[0], "lgtestalice")

    def test_long_unicode_subject_is_folded_and_encoded(self):
        subject = "loginguard: Programm » Simulation « angehalten " * 6
        out, _ = lg_notify("email", self.capture, "root", "alice", subject, "x")
        self.assertEqual(out, "sent")
        _, headers, _ = self.captured()
        i = next(i for i, h in enumerate(headers) if h.startswith("Subject: "))
        lines = [headers[i]] + [h for h in headers[i + 1:] if h.startswith(" ")]
        self.assertGreater(len(lines), 1)
        self.assertTrue(all(len(line) <= 78 for line in lines), lines)
        import email.header
        decoded = str(email.header.make_header(email.header.decode_header(
            "".join(line.strip() for line in lines).replace("Subject: ", ""))))
        self.assertTrue(subject.startswith(decoded), decoded)
        self.assertGreater(len(decoded), 100)

    def test_failing_command_is_named(self):
        out, _ = lg_notify("email", "/bin/false", "root", "alice", "s", "b")
        self.assertEqual(out, "failed: '/bin/false' exited with status 1; the mail was not sent "
                              "(see the mail system's log)")
        out, _ = lg_notify("email", "/nonexistent/sendmail -t", "root", "alice", "s", "b")
        self.assertRegex(out, r"^failed: the sendmail command '/nonexistent/sendmail' is not an "
                              r"executable")

    def test_hung_command_is_killed_at_the_timeout(self):
        hung = os.path.join(self.workdir, "hung-sendmail")
        pidfile = os.path.join(self.workdir, "hung.pid")
        with open(hung, "w") as f:
            f.write(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 60\n")
        os.chmod(hung, 0o755)
        # More than a socket buffer of body: feeding it must not wait either.
        # (How long the call takes past its timeout: make bench prints it.)
        out, _ = lg_notify("email", "--timeout-ms", 500, hung, "root", "alice", "s", "-",
                           stdin="b" * (4 << 20))
        self.assertRegex(out, r"^failed: '.*hung-sendmail' did not finish within 500 ms")
        with open(pidfile) as f:
            pid = int(f.read())
        self.assertFalse(lgtest.alive(pid))


if __name__ == "__main__":
    lgtest.run_tests()
