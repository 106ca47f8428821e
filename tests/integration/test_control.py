"""loginguardctl and the daemon's control socket, for real: a test user
asks about themselves and is refused the rest; root forgives and exempts
on real cgroups; a flood of bad and idle connections holds no sample back
and leaks no descriptor (issue: the control socket and loginguardctl)."""

import json
import os
import resource
import shutil
import socket
import subprocess
import threading
import time

import lgtest
from lgtest import wait_for

SAMPLE = 0.5
WINDOW = 2.0
# spin 2 gets a core when one other session takes the other, and more
# than the threshold with five other sessions wanting a core each.
CPU = 0.3               # cores, the violation threshold
THROTTLE = 0.15         # cores, level 1
EXEMPT = 3              # seconds, the exemption that ends by itself
ADMIN_GROUP = "lgtestadm"
HANG = lgtest.HANG
FLAG_TIMEOUT = WINDOW + HANG
CTL = os.path.join(lgtest.TOP_BUILDDIR, "tools", "loginguardctl")
NSS_MODULE = os.path.join(lgtest.TOP_BUILDDIR, "tests", "helpers", ".libs", "libnss_lgstall.so")


class ControlCase(lgtest.DaemonTestCase):
    """A daemon with the tool copied where test users may run it."""

    @classmethod
    def prepare(cls):
        cls.ctl_bin = lgtest.private_copy(CTL, cls.workdir, "loginguardctl")
        cls.socket = f"{cls.workdir}/control.sock"

    def ctl(self, *args, user=None, via_config=False):
        """loginguardctl as user (root if None): (exit status, stdout, stderr)."""
        def become():
            os.setgroups([])
            os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
            os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
        where = ["--config", self.daemon.conf] if via_config else ["--socket", self.socket]
        p = subprocess.run([self.ctl_bin] + where + list(args), capture_output=True, text=True,
                           timeout=HANG, preexec_fn=become if user else None, cwd="/")
        return p.returncode, p.stdout, p.stderr

    def ctl_json(self, *args, user=None):
        code, out, err = self.ctl("--json", *args, user=user)
        self.assertEqual(code, 0, err)
        return json.loads(out)


class Control(ControlCase):
    @classmethod
    def policy(cls):
        return lgtest.policy(lgtest.enforcing(cls.parent, cls.workdir, admin_group=ADMIN_GROUP,
                                              sample_interval=f"{SAMPLE:g}s"),
                             **lgtest.throttle_policy(CPU, WINDOW, THROTTLE))

    def user_dir(self, uid):
        return os.path.join(lgtest.cgroup_dirs(self.parent)["cpu"], f"user-{uid}")

    def quota(self, uid):
        return int(lgtest.read(os.path.join(self.user_dir(uid), "cpu.cfs_quota_us")))

    def throttled_hog(self, name):
        """A test user with a busy loop, at level 1 with its limits set;
        and the violation that put them there."""
        user = self.users.add(name)
        self.procs.start([self.spin, "2"], user)
        violation = self.daemon.wait_event(FLAG_TIMEOUT, event="violation", uid=user.pw_uid)
        self.daemon.wait_event(HANG, event="limits_set", uid=user.pw_uid, level=1)
        self.assertEqual(self.quota(user.pw_uid), int(THROTTLE * 100000))
        return user, violation

    def position(self, event):
        """Where event is in the log: the daemon's order of things."""
        return self.daemon.events().index(event)

    def assert_refused(self, user, request, *args):
        mark = self.daemon.mark()
        code, out, err = self.ctl(*args, user=user)
        self.assertEqual(code, 1, f"{args}: {out} {err}")
        self.assertIn(f"needs root or membership of the group {ADMIN_GROUP}", err)
        event = self.daemon.wait_event(HANG, after=mark, event="control_refused", uid=user.pw_uid)
        self.assertEqual(event["by_uid"], user.pw_uid)
        self.assertEqual(event["request"], request)

    def test_a_user_sees_their_own_level_and_is_refused_the_rest(self):
        user, violation = self.throttled_hog("lgtest1")
        other = self.users.add("lgtest2")
        code, out, err = self.ctl("me", user=user, via_config=True)
        self.assertEqual(code, 0, err)
        self.assertRegex(out, r"level\s+1 throttled")
        me = self.ctl_json("me", user=user)["user"]
        self.assertEqual((me["user"], me["level"], me["level_name"]), ("lgtest1", 1, "throttled"))
        # Until the level's 10 minutes from the violation are over.
        self.assertEqual(me["until"], violation["until"])
        self.assertAlmostEqual(lgtest.iso_to_epoch(me["until"]),
                               lgtest.iso_to_epoch(violation["time"]) + 600, delta=0.002)
        # Their own row only, whatever else runs.
        rows = self.ctl_json("status", "--all", user=user)["users"]
        self.assertEqual([r["uid"] for r in rows], [user.pw_uid])
        self.assert_refused(user, "user", "user", "lgtest2")
        self.assert_refused(user, "user", "user", str(other.pw_uid))
        self.assert_refused(user, "forgive", "forgive", "lgtest1")
        self.assert_refused(user, "exempt", "exempt", "lgtest2", "--for", "1h", "--reason", "x")
        # Nothing changed.
        self.assertEqual(self.ctl_json("user", "lgtest1")["user"]["level"], 1)

    def test_root_forgives_and_the_share_is_back_at_the_next_sample(self):
        # (How soon after the forgive, in seconds: make bench prints it.)
        user, _ = self.throttled_hog("lgtest3")
        mark = self.daemon.mark()
        code, out, err = self.ctl("forgive", "lgtest3", "--reason", "moved to Slurm")
        self.assertEqual(code, 0, err)
        self.assertIn("lgtest3: forgiven", out)
        # Saved before the reply.
        with open(f"{self.workdir}/state.json") as f:
            saved = {u["uid"]: u for u in json.load(f)["users"]}
        self.assertEqual(saved[user.pw_uid]["level"], 0)
        forgiven = self.daemon.find(mark, event="user_forgiven", uid=user.pw_uid)[0]
        self.assertEqual((forgiven["by_uid"], forgiven["by"], forgiven["reason"],
                          forgiven["level_before"]), (0, "root", "moved to Slurm", 1))
        # The daemon's next sample, all of it after the reply, sets the
        # share back (a sample is counted once its limits are set).
        self.daemon.wait_samples(1)
        freed = self.daemon.find(mark, event="limits_set", uid=user.pw_uid, level=0)
        self.assertTrue(freed, "no limits_set at level 0 in the sample after the forgive")
        freed = freed[0]
        self.assertEqual(self.quota(user.pw_uid), int(freed["limits"]["cpu_cores"] * 100000))
        self.assertGreater(freed["limits"]["cpu_cores"], THROTTLE)

    def test_an_exemption_lifts_the_limits_and_ends_by_itself(self):
        user, _ = self.throttled_hog("lgtest4")
        mark = self.daemon.mark()
        code, out, err = self.ctl("exempt", "lgtest4", "--for", f"{EXEMPT}s", "--reason", "demo")
        self.assertEqual(code, 0, err)
        added = self.daemon.find(mark, event="exempt_added", uid=user.pw_uid)[0]
        self.assertEqual((added["by"], added["reason"]), ("root", "demo"))
        rows = {r["uid"]: r for r in self.ctl_json("status")["users"]}
        self.assertIsNotNone(rows[user.pw_uid]["exempt_until"])
        code, out, err = self.ctl("status")
        self.assertRegex(out, r"lgtest4 .* 1 throttled .*\d\d:\d\d:\d\dZ\s+\S+ \d\d:\d\d:\d\dZ")
        # The hog runs at the share while exempt (the limits the daemon
        # wrote, by its own record: the cgroup may be at level 1 again by
        # the time a busy test reads it)...
        lifted = self.daemon.wait_event(HANG, after=mark, event="limits_set", uid=user.pw_uid,
                                        level=0)
        self.assertGreater(lifted["limits"]["cpu_cores"], THROTTLE)
        # ...until the exemption ends by itself, at its time by the
        # daemon's own clock, and the level's limits are back.
        ended = self.daemon.wait_event(EXEMPT + HANG, after=mark, event="exempt_ended",
                                       uid=user.pw_uid)
        self.assertGreaterEqual(lgtest.iso_to_epoch(ended["time"]),
                                lgtest.iso_to_epoch(added["until"]))
        back = self.daemon.wait_event(HANG, after=mark, event="limits_set", uid=user.pw_uid,
                                      level=1)
        self.assertLess(self.position(lifted), self.position(ended))
        self.assertLess(self.position(ended), self.position(back))
        self.assertEqual(self.quota(user.pw_uid), int(THROTTLE * 100000))
        self.assertIsNone(self.ctl_json("user", "lgtest4")["user"]["exempt_until"])

    def test_an_exemption_outlives_a_restart_and_an_admin_may_remove_it(self):
        user = self.users.add("lgtest5")
        admin = self.users.add(ADMIN_GROUP)  # its own group: a member of admin_group
        mark = self.daemon.mark()
        code, out, err = self.ctl("exempt", "lgtest5", "--for", "1h", "--reason", "workshop",
                                  user=admin)
        self.assertEqual(code, 0, err)
        added = self.daemon.find(mark, event="exempt_added", uid=user.pw_uid)[0]
        # An hour from the request (the event is written once the state is
        # saved, a little after: a hang guard's worth of slack).
        self.assertAlmostEqual(lgtest.iso_to_epoch(added["until"]),
                               lgtest.iso_to_epoch(added["time"]) + 3600, delta=HANG)
        self.daemon.stop()
        self.daemon.start()
        # The same end, however long the restart took.
        self.assertEqual(self.ctl_json("user", "lgtest5")["user"]["exempt_until"], added["until"])
        mark = self.daemon.mark()
        code, out, err = self.ctl("exempt", "lgtest5", "--remove", user=admin)
        self.assertEqual(code, 0, err)
        removed = self.daemon.find(mark, event="exempt_removed", uid=user.pw_uid)[0]
        self.assertEqual((removed["by_uid"], removed["by"]), (admin.pw_uid, ADMIN_GROUP))
        self.assertIsNone(self.ctl_json("user", "lgtest5")["user"]["exempt_until"])

    def test_a_name_not_the_askers_is_refused_before_any_lookup(self):
        # A name no directory knows costs every NSS module a lookup (on an
        # LDAP node, a wait in the daemon's loop): one who is no admin is
        # refused before it, and learns nothing of which names exist.
        user = self.users.add("lgtest7")
        self.assert_refused(user, "user", "user", "lgtest-nobody-has-this")
        code, out, err = self.ctl("me", user=user)
        self.assertEqual(code, 0, err)

    def test_exit_codes_tell_unreachable_from_refused_and_usage(self):
        code, out, err = self.ctl("user", "lgtest-nobody-has-this")
        self.assertEqual(code, 1)
        self.assertIn("no_such_user", err)
        code, out, err = self.ctl("exempt", "root", "--for", "soon", "--reason", "x")
        self.assertEqual(code, 2)
        self.assertIn("--for", err)
        code, out, err = self.ctl("frobnicate")
        self.assertEqual(code, 2)
        p = subprocess.run([self.ctl_bin, "--socket", f"{self.workdir}/no.sock", "status"],
                           capture_output=True, text=True, timeout=HANG)
        self.assertEqual(p.returncode, 3)
        self.assertIn("cannot reach loginguardd", p.stderr)


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def connect(path, timeout=HANG):
    """A connection; while the daemon's backlog is full, a Unix socket's
    connect fails at once (EAGAIN), so it is tried again until timeout."""
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect(path)
            return s
        except BlockingIOError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.005)


def exchange(path, data, shut=False):
    """Send data on a new connection and read until the daemon closes it or
    a line comes: what came back (b"" if closed without a reply)."""
    try:
        s = connect(path)
    except OSError:
        return b""
    with s:
        try:
            s.sendall(data)
            if shut:
                s.shutdown(socket.SHUT_WR)
            got = b""
            while not got.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
            return got
        except OSError:  # reset, broken pipe, timeout
            return b""


class SlowDirectory(ControlCase):
    """A node whose user directory has stopped answering (an LDAP server
    gone quiet): the daemon's NSS goes through a test module
    (tests/helpers/nss_lgstall.c) that holds every lookup while a file
    exists, by way of a private /etc/nsswitch.conf bound over the real one
    in the daemon's own mount namespace.  Processes under uids no file
    knows (a container's) and a user's own request make the daemon ask
    it; the group lists of known users reach it too.  No sample waits: a
    user's hog is judged (without a name), root is answered; the user
    asking about themselves is told the directory did not answer, not
    left hanging; once it answers, so does the daemon, names and all."""

    NAMELESS = 20   # uids with a process each, none in any file

    @classmethod
    def policy(cls):
        return lgtest.policy(lgtest.enforcing(cls.parent, cls.workdir, admin_group=ADMIN_GROUP,
                                              sample_interval=f"{SAMPLE:g}s"),
                             **lgtest.throttle_policy(CPU, WINDOW, THROTTLE))

    @classmethod
    def prepare(cls):
        super().prepare()
        cls.nss = os.path.join(cls.workdir, "nss")
        os.makedirs(cls.nss)
        shutil.copy(NSS_MODULE, os.path.join(cls.nss, "libnss_lgstall.so.2"))
        with open(os.path.join(cls.nss, "nsswitch.conf"), "w") as f:
            f.write("passwd: files lgstall\ngroup: files lgstall\n")
        cls.stall = os.path.join(cls.workdir, "stall")

    @classmethod
    def make_daemon(cls):
        env = dict(os.environ, LD_LIBRARY_PATH=cls.nss, LG_NSS_STALL=cls.stall)
        wrapper = ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                   'mount --bind "$0" /etc/nsswitch.conf && exec "$@"',
                   os.path.join(cls.nss, "nsswitch.conf")]
        return lgtest.Daemon(cls.workdir, cls.policy(), wrapper=wrapper, env=env)

    def unstall(self):
        if os.path.exists(self.stall):
            os.unlink(self.stall)

    def test_a_directory_that_does_not_answer_holds_up_no_sample(self):
        hog = self.users.add("lgtest52")
        open(self.stall, "w").close()
        self.addCleanup(self.unstall)
        first = next(u for u in range(lgtest.TEST_UID_MIN + 60000, lgtest.TEST_UID_MIN + 61000)
                     if not any(lgtest.uid_taken(u + i) for i in range(self.NAMELESS)))
        for i in range(self.NAMELESS):
            self.procs.start(["sleep", "600"], lgtest.Account(first + i))
        self.procs.start([self.spin, "2"], hog)
        # Whether hog is an admin is asked of the directory: hog's own
        # request waits for it, and is told at its deadline it did not
        # answer.  Meanwhile the samples go on, and root (who needs no
        # lookup) is answered: hog is seen, not judged until the directory
        # says who hog is.  (All of it well within the directory helper's
        # 30 s stall deadline.)
        asked = {}
        own = threading.Thread(target=lambda: asked.update(r=self.ctl("status", user=hog)))
        own.start()
        self.daemon.wait_samples(3)
        status = self.ctl_json("status", "--all")
        row = next(u for u in status["users"] if u["uid"] == hog.pw_uid)
        self.assertIn("user directory", row["protected"])
        own.join(HANG)
        code, out, err = asked["r"]
        self.assertNotEqual(code, 0)
        self.assertIn("the user directory (NSS) has not answered in time", out + err)
        # The directory answers again: hog is judged, by name, and told.
        self.unstall()
        violation = self.daemon.wait_event(FLAG_TIMEOUT, event="violation", uid=hog.pw_uid)
        self.assertEqual(violation["user"], "lgtest52")
        wait_for(lambda: self.ctl("status", user=hog)[0] == 0, HANG, "hog's own status")


class Flood(ControlCase):
    """1,000 requests of each bad kind and 200 idle connections."""

    COUNT = 1000
    IDLE = 200

    @classmethod
    def policy(cls):
        return lgtest.policy(lgtest.enforcing(cls.parent, cls.workdir,
                                              sample_interval=f"{SAMPLE:g}s"))

    def run_kind(self, make, shut=False, threads=8):
        """COUNT connections, each sending make(i); the replies."""
        replies = [None] * self.COUNT

        def worker(k):
            for i in range(k, self.COUNT, threads):
                replies[i] = exchange(self.socket, make(i), shut)
        pool = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        return replies

    def test_bad_and_idle_connections_stop_no_sample_and_leak_nothing(self):
        # (How late the samples are during a flood: make bench prints it.)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
        pid = self.daemon.proc.pid
        self.daemon.wait_samples(1)
        fds_before = fd_count(pid)
        idle = [connect(self.socket) for _ in range(self.IDLE)]
        malformed = self.run_kind(lambda i: [b"{not json\n", b"\xff\xfe\x00\n",
                                             b'{"version":1,"request":"status","all":1}\n',
                                             b'{"version":9,"request":"status"}\n'][i % 4])
        oversized = self.run_kind(lambda i: b"x" * (9000 + i))
        half = self.run_kind(lambda i: b'{"version":1,"requ', shut=True)
        # Never finished: written in part and held open.
        unfinished = []
        for i in range(self.COUNT):
            s = connect(self.socket)
            s.sendall(b'{"version":1,')
            unfinished.append(s)
        fds_peak = fd_count(pid)
        # Every slot is held by a connection that sends no whole request:
        # the daemon samples on...
        self.daemon.wait_samples(2)
        # ...and closes each held connection by itself: the oldest to make
        # room for the newer, the rest at its deadline.
        for s in idle + unfinished:
            self.assert_closed_by_daemon(s)
            s.close()
        answered = {
            "malformed": sum(1 for r in malformed if b'"code":"bad_' in r),
            "oversized": sum(1 for r in oversized if b'"code":"too_long"' in r),
            "half-written": sum(1 for r in half if b'"code":"bad_request"' in r),
        }
        print(f"flood: {self.COUNT} each of malformed, oversized, half-written and never "
              f"finished, {self.IDLE} idle; error replies {answered}")
        wait_for(lambda: fd_count(pid) <= fds_before, HANG,
                 "the daemon's descriptors to come back to where they were")
        print(f"daemon descriptors: {fds_before} before, {fds_peak} during, "
              f"{fd_count(pid)} after")
        self.assertIsNone(self.daemon.proc.poll(), "the daemon died")
        self.assertLessEqual(fds_peak, fds_before + 64 + 1)
        # Every malformed and oversized request got its error (their
        # connections are the newest, never the one closed to make room).
        self.assertGreaterEqual(answered["malformed"], self.COUNT * 0.99)
        self.assertGreaterEqual(answered["oversized"], self.COUNT * 0.99)
        # And the socket still serves.
        self.assertIn("mode: enforce", self.ctl("status")[1])

    def assert_closed_by_daemon(self, s):
        """The daemon closed s (an end of file, or a reset), whatever it
        sent first; the socket's timeout (HANG) is the hang guard."""
        try:
            while s.recv(65536):
                pass
        except ConnectionResetError:
            pass


if __name__ == "__main__":
    lgtest.run_tests()
