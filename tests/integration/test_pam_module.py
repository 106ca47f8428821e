"""pam_loginguard.so against daemons that misbehave (issue: the PAM
module).  The real module is loaded by the real libpam (under
pam_wrapper, from a service directory of the test's own) and driven by
lg-pam; what answers it on the control socket is a FAKE daemon written
here, a Unix socket server in a thread.  This is the one mock in the
integration tests and it is on purpose: the real loginguardd never
hangs, never answers garbage and never cuts a reply short, and those are
exactly the cases a login must survive; what the real daemon answers is
tested with the real daemon in test_pam.py.

For every way the daemon can fail to answer (no socket, nobody
listening, accepts and closes, accepts and hangs, garbage, a reply too
long, endless or cut short, an error reply, a full listen queue, too
slow, a trickle that would never end, a listener that is not root) each
of session and account, under fail=open and fail=closed: the module gives
up by itself (a daemon that holds its answer sees the module hang up
first), having waited all of its timeout where the daemon is silent, and
never shows a late answer; fail=open lets the user in, fail=closed
refuses with the documented words, and each failure is exactly one
syslog line naming the socket, the user and the reason.  (How long a
login waits on a hung daemon is a figure `make bench` prints; no test
bounds it from above: a busy machine may make any run late.)  Then what
the fake daemon received is exactly the documented request; what it
answers is shown in order, or nothing with PAM_SILENT; root asks
nothing; bad options are named and their defaults used.  Last, a
thousand sessions and every failure path leave no descriptor open, and
under valgrind no leak."""

import json
import os
import shutil
import socket
import subprocess
import threading
import time

import lgtest
import pamenv
from lgtest import wait_for
from pamenv import PAM_SUCCESS, PAM_PERM_DENIED, PAM_SESSION_ERR, PAM_USER_UNKNOWN, LOG_ERR

# The words fail=closed shows (pam_loginguard(8)).
NOT_ANSWERING = "loginguard: the login guard is not answering; try again shortly"
HANG = lgtest.HANG
# The module's deadline where giving up on time is what a test is about
# (a daemon hung, too slow, trickling, its queue full).
TIMEOUT_MS = 300
# Where what the daemon does decides (it closes, answers garbage, ...):
# the longest timeout the module takes, so that a busy machine never
# turns those into timeouts.  Their answers come at once: it costs nothing.
ANSWER_TIMEOUT_MS = 30000
# How long after the module's deadline a late answer comes.
LATE_S = 5.0
USER = "lgtest80"
OTHER = "lgtest81"
SUPPRESSIONS = os.path.join(lgtest.TOP_SRCDIR, "tests", "valgrind.supp")


def line(obj):
    return (json.dumps(obj) + "\n").encode()


def session_reply(messages, **more):
    reply = {"version": 1, "ok": True, "level": 0, "until": None, "placed": False,
             "messages": messages}
    reply.update(more)
    return reply


def account_reply(refuse, message=None, level=0):
    reply = {"version": 1, "ok": True, "level": level,
             "until": "2026-11-27T03:00:00.000Z" if level else None, "refuse": refuse}
    if message is not None:
        reply["message"] = message
    return reply


class FakeDaemon:
    """A Unix stream socket at self.path served by a thread; each
    connection is handed to handler(fake, conn) in a thread of its own.
    requests holds each request line as received (bytes)."""

    count = 0

    def __init__(self, directory, handler, backlog=16):
        FakeDaemon.count += 1
        self.path = os.path.join(directory, f"fake{FakeDaemon.count}.sock")
        self.handler = handler
        self.requests = []
        self.hangups = 0  # connections the client closed before the answer was whole
        self.sent = 0
        self.stopping = threading.Event()
        self.conns = []
        self.lock = threading.Lock()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(backlog)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        self.sock.settimeout(0.02)
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self.lock:
                self.conns.append(conn)
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn):
        try:
            self.handler(self, conn)
        except OSError:
            pass  # the module hung up: its right, at its deadline
        finally:
            conn.close()

    def read_request(self, conn):
        """One request line (or what came before the client's EOF)."""
        conn.settimeout(HANG)
        data = b""
        while b"\n" not in data:
            chunk = conn.recv(4096)
            if not chunk:
                break
            data += chunk
        with self.lock:
            self.requests.append(data)
        return data

    def hung_up(self):
        with self.lock:
            self.hangups += 1

    def wait_hangup(self, conn, seconds=None):
        """Whether the client closes the connection within seconds (None:
        until the test ends); counted in hangups if it does."""
        end = None if seconds is None else time.monotonic() + seconds
        conn.settimeout(0.02)
        while not self.stopping.is_set() and (end is None or time.monotonic() < end):
            try:
                if conn.recv(4096):
                    continue
            except socket.timeout:
                continue
            except ConnectionResetError:  # closed with our bytes unread
                pass
            self.hung_up()
            return True
        return False

    def wait_close(self, conn):
        """Hold the connection as the real daemon does until the client
        closes it (or the test ends)."""
        conn.settimeout(0.05)
        while not self.stopping.is_set():
            try:
                if not conn.recv(4096):
                    return
            except socket.timeout:
                continue

    def stop(self):
        self.stopping.set()
        self.sock.close()
        self.thread.join()
        with self.lock:
            for conn in self.conns:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


# What a fake daemon does with each connection.

def answer(reply, delay=0.0):
    """reply, delay seconds after the request unless the client hangs
    up first (counted)."""
    data = reply if isinstance(reply, bytes) else line(reply)

    def handler(fake, conn):
        fake.read_request(conn)
        if delay and (fake.wait_hangup(conn, delay) or fake.stopping.is_set()):
            return
        conn.sendall(data)
        fake.wait_close(conn)
    return handler


def answer_each(replies):
    """The reply for a request: replies[request's "request"]."""
    def handler(fake, conn):
        request = json.loads(fake.read_request(conn))
        conn.sendall(line(replies[request["request"]]))
        fake.wait_close(conn)
    return handler


def close_at_once(fake, conn):
    conn.close()


def hang(fake, conn):
    """Reads the request, never answers; counts the client's hang-up."""
    fake.read_request(conn)
    fake.wait_hangup(conn)


def cut_short(fake, conn):
    fake.read_request(conn)
    conn.sendall(b'{"version":1,"ok":true,"messages":["You are')


def endless(fake, conn):
    """A reply that never ends (no newline, ever)."""
    fake.read_request(conn)
    chunk = b"x" * 65536
    while not fake.stopping.is_set():
        conn.sendall(chunk)
        fake.sent += len(chunk)


def trickle(reply, interval):
    """A whole reply, one byte every interval: each byte in time for a
    per-read timeout, the whole far beyond the exchange's."""
    data = line(reply)

    def handler(fake, conn):
        fake.read_request(conn)
        for i in range(len(data)):
            if fake.wait_hangup(conn, interval) or fake.stopping.is_set():
                return
            try:
                conn.sendall(data[i:i + 1])
            except OSError:  # it hung up meanwhile
                fake.hung_up()
                return
        fake.wait_close(conn)
    return handler


class Case(lgtest.unittest.TestCase):
    """A test user, a service directory, and the fake daemons a test made
    (stopped after it)."""

    @classmethod
    def setUpClass(cls):
        lgtest.Fixture.of(cls, "pam")
        cls.user = cls.users.add(USER)
        cls.other = cls.users.add(OTHER)
        cls.pam = pamenv.PamEnv(cls.workdir)
        cls.services = 0

    def setUp(self):
        # Registered first, so run last (after the cleanups that end a
        # test user's listener): nothing of the test users outlives a test.
        self.addCleanup(lambda: lgtest.assert_none_left(self.users.uids(), self.id()))
        self.fakes = []
        self.procs = lgtest.Processes()

    def tearDown(self):
        for fake in self.fakes:
            fake.stop()
        self.procs.stop_all()

    def fake(self, handler, backlog=16):
        fake = FakeDaemon(self.workdir, handler, backlog)
        self.fakes.append(fake)
        return fake

    def service(self, options, **kw):
        """A new service with the module alone in account and session."""
        type(self).services += 1
        name = f"lg{self.services}"
        self.pam.module_service(name, options, **kw)
        return name

    def run_steps(self, socket_path, steps, options=(), user=USER, silent=False, **kw):
        name = self.service([f"socket={socket_path}"] + list(options))
        return self.pam.run(name, user, *steps, silent=silent, **kw)

    def assert_no_syslog(self, result):
        self.assertEqual(result.syslog, [], result)


# Each way a daemon fails to answer: a function of the test case giving
# (socket path, fake or None, the syslog reason as a regular expression).

def no_socket(t):
    return os.path.join(t.workdir, "absent.sock"), None, r"No such file"


def nobody_listening(t):
    path = os.path.join(t.workdir, f"stale{FakeDaemon.count}.sock")
    FakeDaemon.count += 1
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()  # the file stays, as after a daemon killed by SIGKILL
    t.addCleanup(os.unlink, path)
    return path, None, r"Connection refused"


def dead(t):
    fake = t.fake(close_at_once)
    return fake.path, fake, r"no reply|cut short|Connection reset|Broken pipe"


def hung(t):
    fake = t.fake(hang)
    return fake.path, fake, r"timed out waiting for the reply"


def garbage(t):
    fake = t.fake(answer(b"HTTP/1.0 200 OK \x1b[2J\n"))
    return fake.path, fake, r"not a JSON object"


def not_an_object(t):
    fake = t.fake(answer(b'["ok", true]\n'))
    return fake.path, fake, r"not a JSON object"


def too_long(t):
    fake = t.fake(answer(session_reply(["x" * 70000])))
    return fake.path, fake, r"too long"


def never_ending(t):
    fake = t.fake(endless)
    return fake.path, fake, r"too long"


def cut(t):
    fake = t.fake(cut_short)
    return fake.path, fake, r"cut short"


def error_reply(t):
    fake = t.fake(answer({"version": 1, "ok": False,
                          "error": {"code": "failed", "message": "state dir not writable"}}))
    return fake.path, fake, r"error: state dir not writable"


def full_queue(t):
    """Listening, never accepting, its queue full: connect cannot get in."""
    path = os.path.join(t.workdir, f"full{FakeDaemon.count}.sock")
    FakeDaemon.count += 1
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(0)
    clients = []
    while True:
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.setblocking(False)
        try:
            c.connect(path)
        except BlockingIOError:
            c.close()
            break
        clients.append(c)
        assert len(clients) < 1000, "the listen queue never filled"

    def cleanup():
        for c in clients:
            c.close()
        server.close()
        os.unlink(path)
    t.addCleanup(cleanup)
    return path, None, r"listen queue full"


def too_slow(t):
    fake = t.fake(answer(session_reply(["late"]), delay=TIMEOUT_MS / 1000 + LATE_S))
    return fake.path, fake, r"timed out waiting for the reply"


def trickling(t):
    # About 100 bytes, one every 50 ms: 5 s in all.
    fake = t.fake(trickle(session_reply(["slowly"]), 0.05))
    return fake.path, fake, r"timed out waiting for the reply"


LISTENER = r"""
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
s.listen(16)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    try:
        c.recv(4096)
        c.sendall(sys.argv[2].encode())
    except OSError:
        pass
    c.close()
"""


def not_root(t):
    """A test user's own listener, answering what the daemon would: a
    socket= that points at it must not let them speak for loginguard."""
    d = os.path.join(t.workdir, f"user{FakeDaemon.count}")
    FakeDaemon.count += 1
    os.mkdir(d)
    os.chown(d, t.other.pw_uid, t.other.pw_gid)
    path = os.path.join(d, "control.sock")
    reply = json.dumps(account_reply(False) | session_reply(["all is well"])) + "\n"
    p = subprocess.Popen(["/usr/bin/python3", "-c", LISTENER, path, reply], stdout=subprocess.PIPE,
                         preexec_fn=lambda: (os.setgroups([]),
                                             os.setresgid(t.other.pw_gid, t.other.pw_gid,
                                                          t.other.pw_gid),
                                             os.setresuid(t.other.pw_uid, t.other.pw_uid,
                                                          t.other.pw_uid)))
    t.addCleanup(lambda: (p.kill(), p.wait(), p.stdout.close()))
    assert p.stdout.readline() == b"ready\n"
    return path, None, rf"served by uid {t.other.pw_uid}, not root"


FAILURES = [no_socket, nobody_listening, dead, hung, garbage, not_an_object, too_long,
            never_ending, cut, error_reply, full_queue, too_slow, trickling, not_root]
# Those where the module's deadline decides: the daemon never answers (in
# time, or whole), or connect never gets in.
TIMED = (hung, too_slow, trickling, full_queue)


def timeout_for(make, timed_ms):
    """timed_ms for a failure the deadline decides; else the longest, so
    that the failure's own path is the one taken however busy the machine."""
    return timed_ms if make in TIMED else ANSWER_TIMEOUT_MS


class Unanswered(Case):
    """Each failure: session and account, fail=open and fail=closed."""

    def check_failure(self, make):
        path, fake, reason = make(self)
        timeout = timeout_for(make, TIMEOUT_MS)
        for step in ("open", "account"):
            for fail in ("open", "closed"):
                with self.subTest(step=step, fail=fail):
                    r = self.run_steps(path, [step], [f"timeout={timeout}ms", f"fail={fail}",
                                                      "deny_level=3"])
                    s = r.step(step)
                    if make in TIMED:
                        # It waited for the daemon, all of the time it was
                        # given (lg-pam's clock; the module counts whole ms).
                        self.assertGreaterEqual(s.ms, timeout - 1, r)
                    if make in TIMED and fake is not None:
                        # ...and then gave up by itself: it hung up while
                        # the daemon still held its answer (or the rest of it).
                        wait_for(lambda: fake.hangups == len(fake.requests), HANG,
                                 "the module to hang up")
                    if fail == "open":
                        self.assertEqual(s.rc, PAM_SUCCESS, r)
                        self.assertEqual(s.messages, [], r)
                    else:
                        self.assertEqual(s.rc, PAM_SESSION_ERR if step == "open"
                                         else PAM_PERM_DENIED, r)
                        self.assertEqual(len(s.errors), 1, r)
                        self.assertTrue(s.errors[0].startswith(NOT_ANSWERING), r)
                        self.assertEqual(s.infos, [], r)
                    # One line, saying where, for whom and why.
                    self.assertEqual(len(r.syslog), 1, r)
                    priority, text = r.syslog[0]
                    self.assertEqual(priority, LOG_ERR, r)
                    self.assertIn("loginguard", text)
                    self.assertIn(path, text)
                    self.assertIn(USER, text)
                    self.assertRegex(text, reason)
        if fake is not None:
            # One connection per call at most, and nothing but the request.
            self.assertLessEqual(len(fake.requests), 4)
            for raw in fake.requests:
                self.assertIn(json.loads(raw)["request"], ("session", "account"))

    def test_a_hung_daemon_that_never_answers_under_fail_closed_with_silent_shows_nothing(self):
        path, fake, _ = hung(self)
        for step, refused in (("open", PAM_SESSION_ERR), ("account", PAM_PERM_DENIED)):
            r = self.run_steps(path, [step], ["timeout=100ms", "fail=closed", "deny_level=3"],
                               silent=True)
            self.assertEqual(r.step(step).rc, refused, r)
            self.assertEqual(r.step(step).messages, [], r)
            self.assertEqual(len(r.syslog), 1, r)

    def test_fail_open_is_the_default(self):
        path, _, _ = no_socket(self)
        r = self.run_steps(path, ["account", "open"], ["deny_level=3"])
        self.assertEqual([s.rc for s in r.steps], [PAM_SUCCESS, PAM_SUCCESS], r)
        self.assertEqual(len(r.syslog), 2, r)

    def test_the_default_timeout_is_one_second(self):
        # (The figure itself: tests/unit/test_pam_options.c.)  Loaded by
        # libpam without timeout=, the module waits its whole second, and
        # gives up before an answer that comes after that.
        fake = self.fake(answer(session_reply(["late"]), delay=1 + LATE_S))
        r = self.run_steps(fake.path, ["open"])
        s = r.step("open")
        self.assertEqual((s.rc, s.messages), (PAM_SUCCESS, []), r)
        self.assertGreaterEqual(s.ms, 1000 - 1, r)
        self.assertIn("timed out waiting for the reply", r.syslog[0][1], r)
        wait_for(lambda: fake.hangups == 1, HANG, "the module to hang up")


for _make in FAILURES:
    def _test(self, make=_make):
        self.check_failure(make)
    _test.__doc__ = _make.__doc__
    setattr(Unanswered, f"test_{_make.__name__}", _test)


class Answered(Case):
    """What the module asks, and what it does with what it is told."""

    def uid(self):
        return self.user.pw_uid

    def test_the_session_request_is_exactly_the_documented_one(self):
        fake = self.fake(answer(session_reply([])))
        r = self.run_steps(fake.path, ["open", "close"])
        self.assertEqual([s.rc for s in r.steps], [PAM_SUCCESS, PAM_SUCCESS], r)
        # close_session asks nothing.
        self.assertEqual(len(fake.requests), 1)
        raw = fake.requests[0]
        self.assertTrue(raw.endswith(b"\n") and raw.count(b"\n") == 1, raw)
        self.assertEqual(json.loads(raw), {"version": 1, "request": "session",
                                           "user": self.uid(), "notices": True})
        self.assert_no_syslog(r)

    def test_the_account_request_is_exactly_the_documented_one(self):
        fake = self.fake(answer(account_reply(False)))
        r = self.run_steps(fake.path, ["account"], ["deny_level=3"])
        self.assertEqual(r.step("account").rc, PAM_SUCCESS, r)
        self.assertEqual(r.step("account").messages, [], r)
        self.assertEqual(len(fake.requests), 1)
        raw = fake.requests[0]
        self.assertTrue(raw.endswith(b"\n") and raw.count(b"\n") == 1, raw)
        self.assertEqual(json.loads(raw), {"version": 1, "request": "account",
                                           "user": self.uid(), "deny_level": 3})
        self.assert_no_syslog(r)

    def test_messages_are_shown_in_order_one_text_info_each_lines_and_all(self):
        messages = ["Welcome to the login node.",
                    "Your standing: level 2 (throttled)\nCPU 0.5 cores\nuntil 03:00 UTC",
                    "A program was stopped\n\nlgminer used 4 cores for 10 minutes.",
                    ""]
        fake = self.fake(answer(session_reply(messages, level=2)))
        r = self.run_steps(fake.path, ["open"])
        self.assertEqual(r.step("open").rc, PAM_SUCCESS)
        self.assertEqual(r.step("open").messages, [("info", m) for m in messages], r)
        self.assert_no_syslog(r)

    def test_a_reply_with_nothing_to_show_shows_nothing(self):
        for reply in (session_reply([]), {"version": 1, "ok": True}):
            fake = self.fake(answer(reply))
            r = self.run_steps(fake.path, ["open"])
            self.assertEqual(r.step("open").rc, PAM_SUCCESS)
            self.assertEqual(r.step("open").messages, [], r)

    def test_what_is_not_a_string_among_the_messages_is_not_shown(self):
        fake = self.fake(answer(session_reply(["one", 2, None, {"x": "y"}, ["z"], "three"])))
        r = self.run_steps(fake.path, ["open"])
        self.assertEqual(r.step("open").rc, PAM_SUCCESS)
        self.assertEqual(r.step("open").infos, ["one", "three"], r)

    def test_silent_asks_without_notices_and_shows_nothing(self):
        # The daemon answers messages anyway: the module still shows none.
        fake = self.fake(answer(session_reply(["you should not see this"])))
        r = self.run_steps(fake.path, ["open"], silent=True)
        self.assertEqual(r.step("open").rc, PAM_SUCCESS)
        self.assertEqual(r.step("open").messages, [], r)
        self.assertEqual(json.loads(fake.requests[0]), {"version": 1, "request": "session",
                                                        "user": self.uid(), "notices": False})

    def test_a_program_of_the_user_itself_asks_the_same(self):
        # A screen locker or su to oneself runs PAM as the user, not root:
        # the same request (the daemon, not the module, decides what a
        # peer that is not root may have), the socket mode 0666 as the
        # daemon's.
        fake = self.fake(answer(session_reply(["hello"])))
        os.chmod(fake.path, 0o666)
        r = self.run_steps(fake.path, ["open", "close"], as_user=self.user)
        self.assertEqual((r.step("open").rc, r.step("open").infos), (PAM_SUCCESS, ["hello"]), r)
        self.assertEqual(json.loads(fake.requests[0]), {"version": 1, "request": "session",
                                                        "user": self.uid(), "notices": True})
        self.assert_no_syslog(r)

    def test_a_refusal_is_shown_as_an_error_and_logged(self):
        message = "Your logins are refused: level 3 (restricted)\nuntil 2026-11-27 03:00 UTC."
        fake = self.fake(answer(account_reply(True, message, level=3)))
        r = self.run_steps(fake.path, ["account"], ["deny_level=3"])
        s = r.step("account")
        self.assertEqual(s.rc, PAM_PERM_DENIED, r)
        self.assertEqual(s.messages, [("error", message)], r)
        self.assertEqual(len(r.syslog), 1, r)
        self.assertEqual(r.syslog[0][0], pamenv.LOG_NOTICE)
        self.assertRegex(r.syslog[0][1], rf"refused {USER}\b.*level 3")

    def test_a_silent_refusal_refuses_without_a_word_to_the_user(self):
        fake = self.fake(answer(account_reply(True, "go away", level=3)))
        r = self.run_steps(fake.path, ["account"], ["deny_level=3"], silent=True)
        self.assertEqual(r.step("account").rc, PAM_PERM_DENIED, r)
        self.assertEqual(r.step("account").messages, [], r)
        self.assertEqual(len(r.syslog), 1, r)

    def test_a_refusal_without_its_message_still_says_something(self):
        fake = self.fake(answer(account_reply(True, None, level=4)))
        r = self.run_steps(fake.path, ["account"], ["deny_level=3"])
        self.assertEqual(r.step("account").rc, PAM_PERM_DENIED, r)
        self.assertEqual(len(r.step("account").errors), 1, r)
        self.assertIn("loginguard", r.step("account").errors[0])

    def test_root_asks_nothing(self):
        # A hung daemon and fail=closed: had it asked, root would wait and
        # be refused, and syslog would say so.
        fake = self.fake(hang)
        r = self.run_steps(fake.path, ["account", "open", "close"],
                           ["deny_level=1", "fail=closed"], user="root")
        # account: PAM_IGNORE, which libpam turns into PAM_PERM_DENIED in a
        # stack where every module ignored (here the module is alone);
        # sshd's stack has pam_unix before it.
        self.assertEqual([s.rc for s in r.steps], [PAM_PERM_DENIED, PAM_SUCCESS, PAM_SUCCESS], r)
        self.assertEqual(fake.requests, [])
        self.assert_no_syslog(r)
        # In a stack with a module that says yes, root gets in.
        name = f"root{self.services}"
        self.pam.service(name, [f"account required {self.pam.module} socket={fake.path} "
                                "deny_level=1 fail=closed",
                                f"account required {pamenv.system_module('pam_permit.so')}"])
        r = self.pam.run(name, "root", "account")
        self.assertEqual(r.step("account").rc, PAM_SUCCESS, r)
        self.assertEqual(fake.requests, [])

    def test_without_deny_level_account_asks_nothing(self):
        fake = self.fake(hang)
        for options in ([], ["deny_level=0"]):
            r = self.run_steps(fake.path, ["account"], options + ["fail=closed"])
            # PAM_IGNORE (libpam's PAM_PERM_DENIED for a stack of ignores),
            # with nothing asked (the daemon is hung) and nothing said to anyone.
            self.assertEqual(r.step("account").rc, PAM_PERM_DENIED, r)
            self.assertEqual(r.step("account").messages, [], r)
            self.assert_no_syslog(r)
        self.assertEqual(fake.requests, [])

    def test_a_slow_daemon_within_the_timeout_is_waited_for(self):
        # The answer comes half a second after the request, well within
        # the timeout whatever else the machine runs: it is shown.
        fake = self.fake(answer(session_reply(["slow but here"]), delay=0.5))
        r = self.run_steps(fake.path, ["open"], ["timeout=10s", "fail=closed"])
        s = r.step("open")
        self.assertEqual((s.rc, s.infos), (PAM_SUCCESS, ["slow but here"]), r)
        self.assertEqual(fake.hangups, 0)
        self.assert_no_syslog(r)

    def test_terminal_escapes_pass_through_as_the_daemon_sent_them(self):
        # The daemon escapes what users or sites wrote (login_banner, a
        # program's name) before it sends it; the module shows the text
        # it is given, byte for byte, and adds nothing.
        text = "caf\u00e9 \x1b[1mbold\x1b[0m \u2713"
        fake = self.fake(answer(session_reply([text])))
        r = self.run_steps(fake.path, ["open"])
        self.assertEqual(r.step("open").infos, [text], r)

    def test_a_large_reply_within_the_bound_is_shown_whole(self):
        text = "y" * 60000
        fake = self.fake(answer(session_reply([text])))
        r = self.run_steps(fake.path, ["open"])
        self.assertEqual(r.step("open").infos, [text])

    def test_an_endless_reply_is_cut_off_at_the_bound_not_the_timeout(self):
        # The longest timeout: what ends the exchange is the bound, as
        # syslog says (a timeout would say "timed out").
        fake = self.fake(endless)
        r = self.run_steps(fake.path, ["open"], [f"timeout={ANSWER_TIMEOUT_MS}ms"])
        self.assertEqual(r.step("open").rc, PAM_SUCCESS)
        self.assertEqual(len(r.syslog), 1, r)
        self.assertRegex(r.syslog[0][1], "too long")

    def test_odd_replies_never_crash_and_never_show_what_is_not_text(self):
        """Replies no daemon of ours writes: each is either taken for what
        it says or is a failure (one line, the user let in); never a crash,
        never a refusal under fail=open, nothing shown that is not a string
        of "messages"."""
        odd = [b'{"version":1,"ok":true,"messages":"not a list"}\n',
               b'{"version":1,"ok":true,"messages":{"0":"x"}}\n',
               b'{"version":1,"ok":true,"ok":false}\n',
               b'{"version":1,"ok":"true","messages":["x"]}\n',
               b'{"version":1,"ok":true,"messages":["\xff\xfe"]}\n',
               b'{"version":1,"ok":true,"messages":["a\x00b"]}\n',
               b'{"version":1,"ok":true,"messages":["a\\u0000b"]}\n',
               b'{"version":1,"ok":true,"messages":[' + b'[' * 60000 + b'\n',
               b'\n', b'\r\n', b'null\n', b'1e999999\n']
        for reply in odd:
            with self.subTest(reply=reply[:60]):
                fake = self.fake(answer(reply))
                r = self.run_steps(fake.path, ["open"], [f"timeout={ANSWER_TIMEOUT_MS}ms"])
                s = r.step("open")
                self.assertEqual(s.rc, PAM_SUCCESS, r)
                self.assertEqual(s.errors, [], r)
                self.assertIn(len(r.syslog), (0, 1), r)
                if r.syslog:
                    self.assertEqual(s.infos, [], r)
                    # Judged on what it is, not timed out.
                    self.assertNotIn("timed out", r.syslog[0][1], r)

    def test_a_socket_path_too_long_for_unix_sockets_is_a_failure_not_a_crash(self):
        path = "/" + "d" * 200 + "/control.sock"
        for fail, rc in (("open", PAM_SUCCESS), ("closed", PAM_SESSION_ERR)):
            r = self.run_steps(path, ["open"], [f"fail={fail}"])
            self.assertEqual(r.step("open").rc, rc, r)
            self.assertEqual(len(r.syslog), 1, r)
            self.assertIn("too long", r.syslog[0][1])

    def test_bad_options_are_named_once_each_and_their_defaults_used(self):
        fake = self.fake(answer(session_reply(["late"]), delay=1 + LATE_S))
        bad = ["timeout=5ms", "fail=maybe", "deny_level=65", "bogus", "socket=relative.sock"]
        r = self.run_steps(fake.path, ["open"], bad)
        s = r.step("open")
        # fail=open and a timeout of 1s, the defaults: it waited its whole
        # second (not 5 ms), and gave up before the late answer.
        self.assertEqual((s.rc, s.messages), (PAM_SUCCESS, []), r)
        self.assertGreaterEqual(s.ms, 1000 - 1, r)
        wait_for(lambda: fake.hangups == 1, HANG, "the module to hang up")
        complaints = [text for _, text in r.syslog if "did not answer" not in text]
        self.assertEqual(len(complaints), len(bad), r)
        for option, text in zip(bad, complaints):
            self.assertIn(option, text)
        # The socket= given first stands: the bad one later was not used.
        self.assertEqual(len(fake.requests), 1)
        # deny_level=65: refuse nobody, ask nothing.
        r = self.run_steps(fake.path, ["account"], ["deny_level=65"])
        self.assertEqual(len(fake.requests), 1)
        self.assertEqual(len(r.syslog), 1, r)
        self.assertIn("deny_level=65", r.syslog[0][1])

    def test_debug_logs_one_line_for_each_exchange(self):
        fake = self.fake(answer_each({"session": session_reply(["hi"]),
                                      "account": account_reply(False)}))
        r = self.run_steps(fake.path, ["account", "open", "close"], ["debug", "deny_level=2"])
        self.assertEqual([s.rc for s in r.steps], [PAM_SUCCESS] * 3, r)
        self.assertEqual([p for p, _ in r.syslog], [7, 7], r)
        self.assertIn('"request":"account"', r.syslog[0][1])
        self.assertIn('"request":"session"', r.syslog[1][1])

    def test_a_user_without_a_passwd_entry(self):
        fake = self.fake(hang)
        nobody = "lgtest-nosuchuser"
        r = self.run_steps(fake.path, ["account", "open"], ["deny_level=3", "fail=closed"],
                           user=nobody)
        self.assertEqual([s.rc for s in r.steps], [PAM_USER_UNKNOWN, PAM_SESSION_ERR], r)
        self.assertEqual(len(r.syslog), 2, r)
        self.assertTrue(all(nobody in text for _, text in r.syslog), r)
        r = self.run_steps(fake.path, ["open"], ["deny_level=3"], user=nobody)
        self.assertEqual(r.step("open").rc, PAM_SUCCESS, r)
        self.assertEqual(len(r.syslog), 1, r)
        self.assertEqual(fake.requests, [])


class Cycles(Case):
    """A long-running sshd opens sessions for months: nothing may pile up."""

    def test_a_thousand_sessions_leave_no_descriptor_open(self):
        # (How long a session's exchange takes: make bench prints it.)
        messages = ["banner", "standing\nlevel 1", "notice\n\nbody"]
        fake = self.fake(answer(session_reply(messages)))
        r = self.run_steps(fake.path, ["open", "close"], cycles=1000, timeout=300)
        opens = [s for s in r.steps if s.name == "open"]
        self.assertEqual(len(opens), 1000)
        self.assertTrue(all(s.rc == PAM_SUCCESS and s.infos == messages for s in opens))
        self.assertEqual(r.fds_after, r.fds_before, r.stdout[-500:])
        self.assertEqual(len(fake.requests), 1000)

    def test_every_failure_path_closes_its_socket(self):
        for make in FAILURES:
            with self.subTest(make.__name__):
                path, _, _ = make(self)
                timeout = timeout_for(make, 20)
                for step in ("open", "account"):
                    r = self.run_steps(path, [step], [f"timeout={timeout}ms", "deny_level=3"],
                                       cycles=10)
                    self.assertEqual(r.fds_after, r.fds_before, f"{make.__name__} {step}")
                    self.assertEqual(len(r.syslog), 10, r)


class Valgrind(Case):
    """lg-pam under memcheck: the module's every path, no error, no leak
    (a plain build only: a sanitizer build checks the same its own way)."""

    @classmethod
    def setUpClass(cls):
        if os.environ.get("LG_SANITIZERS"):
            raise lgtest.unittest.SkipTest("a sanitizer build: valgrind cannot run it")
        if not shutil.which("valgrind"):
            raise lgtest.unittest.SkipTest("valgrind is not installed")
        super().setUpClass()

    def valgrind(self, path, steps, options, cycles, name, service=None):
        """lg-pam under memcheck through a service of the module alone
        with these options (or the service given)."""
        log = os.path.join(self.workdir, f"valgrind-{name}.log")
        service = service or self.service([f"socket={path}"] + list(options))
        r = self.pam.run(service, USER, *steps, cycles=cycles, timeout=600, wrapper=[
            "valgrind", "--quiet", "--leak-check=full", "--show-leak-kinds=definite,indirect",
            "--errors-for-leak-kinds=definite,indirect", "--track-fds=no",
            f"--suppressions={SUPPRESSIONS}", f"--log-file={log}"])
        with open(log) as f:
            report = "".join(line for line in f if line.startswith("=="))
        self.assertEqual(report, "", f"valgrind on {name}")
        self.assertEqual(r.fds_after, r.fds_before, name)
        return r

    def test_sessions_with_messages(self):
        # A hundred cycles: the module keeps nothing from one to the next,
        # so a leak shows in the first (a thousand, without valgrind: Cycles).
        messages = ["banner", "standing\nlevel 1", "notice\n\nbody"]
        fake = self.fake(answer_each({"session": session_reply(messages),
                                      "account": account_reply(False)}))
        r = self.valgrind(fake.path, ["account", "open", "close"], ["deny_level=3"], 100,
                          "cycles")
        opens = [s for s in r.steps if s.name == "open"]
        self.assertEqual(len(opens), 100)
        self.assertTrue(all(s.rc == PAM_SUCCESS and s.infos == messages for s in opens))

    def test_refusals_and_every_failure_path(self):
        fake = self.fake(answer(account_reply(True, "refused", level=3)))
        self.valgrind(fake.path, ["account"], ["deny_level=3"], 20, "refusal")
        for make in FAILURES:
            with self.subTest(make.__name__):
                path, _, _ = make(self)
                timeout = timeout_for(make, 50)
                # fail=open and fail=closed in one run (one valgrind start):
                # two lines a stack, each "optional" so that both run.
                type(self).services += 1
                name = f"lg{self.services}"
                self.pam.service(name, [
                    f"{kind} optional {self.pam.module} socket={path} timeout={timeout}ms "
                    f"deny_level=3 fail={fail} bogus timeout=x"
                    for kind in ("account", "session") for fail in ("open", "closed")])
                r = self.valgrind(path, ["account", "open"], (), 5, make.__name__, name)
                # Each line failed its own way: a line of its own each time.
                failed = [t for _, t in r.syslog if "did not answer" in t]
                self.assertEqual(len(failed), 5 * 2 * 2, r)


if __name__ == "__main__":
    pamenv.require_pam_wrapper()
    lgtest.run_tests()
