"""loginguardctl and the daemon's control socket, for real: a test user
asks about themselves and is refused the rest; root forgives and exempts
on real cgroups; a flood of bad and idle connections holds no sample back
and leaks no descriptor (issue: the control socket and loginguardctl)."""

import json
import os
import resource
import socket
import statistics
import subprocess
import threading
import time

import lgtest
from lgtest import wait_for

SAMPLE = 1.0
WINDOW = 4.0
THROTTLE = 0.5          # cores, level 1
ADMIN_GROUP = "lgtestadm"
FLAG_TIMEOUT = WINDOW + 2 * SAMPLE + 10
CTL = os.path.join(lgtest.TOP_BUILDDIR, "tools", "loginguardctl")


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
                           timeout=30, preexec_fn=become if user else None, cwd="/")
        return p.returncode, p.stdout, p.stderr

    def ctl_json(self, *args, user=None):
        code, out, err = self.ctl("--json", *args, user=user)
        self.assertEqual(code, 0, err)
        return json.loads(out)


class Control(ControlCase):
    @classmethod
    def policy(cls):
        return (lgtest.enforcing(cls.parent, cls.workdir, admin_group=ADMIN_GROUP)
                + lgtest.throttle_policy(1, WINDOW, THROTTLE))

    def user_dir(self, uid):
        return os.path.join(lgtest.cgroup_dirs(self.parent)["cpu"], f"user-{uid}")

    def quota(self, uid):
        return int(lgtest.read(os.path.join(self.user_dir(uid), "cpu.cfs_quota_us")))

    def throttled_hog(self, name):
        """A test user with a busy loop, at level 1 with its limits set."""
        user = self.users.add(name)
        self.procs.start([self.spin, "2"], user)
        self.daemon.wait_event(FLAG_TIMEOUT, event="violation", uid=user.pw_uid)
        self.daemon.wait_event(5, event="limits_set", uid=user.pw_uid, level=1)
        self.assertEqual(self.quota(user.pw_uid), int(THROTTLE * 100000))
        return user

    def assert_refused(self, user, request, *args):
        mark = self.daemon.mark()
        code, out, err = self.ctl(*args, user=user)
        self.assertEqual(code, 1, f"{args}: {out} {err}")
        self.assertIn(f"needs root or membership of the group {ADMIN_GROUP}", err)
        event = self.daemon.wait_event(5, after=mark, event="control_refused", uid=user.pw_uid)
        self.assertEqual(event["by_uid"], user.pw_uid)
        self.assertEqual(event["request"], request)

    def test_a_user_sees_their_own_level_and_is_refused_the_rest(self):
        user = self.throttled_hog("lgtest1")
        other = self.users.add("lgtest2")
        code, out, err = self.ctl("me", user=user, via_config=True)
        self.assertEqual(code, 0, err)
        self.assertRegex(out, r"level\s+1 throttled")
        me = self.ctl_json("me", user=user)["user"]
        self.assertEqual((me["user"], me["level"], me["level_name"]), ("lgtest1", 1, "throttled"))
        self.assertGreater(lgtest.iso_to_epoch(me["until"]), time.time() + 500)
        # Their own row only, whatever else runs.
        rows = self.ctl_json("status", "--all", user=user)["users"]
        self.assertEqual([r["uid"] for r in rows], [user.pw_uid])
        self.assert_refused(user, "user", "user", "lgtest2")
        self.assert_refused(user, "user", "user", str(other.pw_uid))
        self.assert_refused(user, "forgive", "forgive", "lgtest1")
        self.assert_refused(user, "exempt", "exempt", "lgtest2", "--for", "1h", "--reason", "x")
        # Nothing changed.
        self.assertEqual(self.ctl_json("user", "lgtest1")["user"]["level"], 1)

    def test_root_forgives_and_the_share_is_back_within_one_sample(self):
        user = self.throttled_hog("lgtest3")
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
        freed = self.daemon.wait_event(2 * SAMPLE + 1, after=mark, event="limits_set",
                                       uid=user.pw_uid, level=0)
        delay = lgtest.iso_to_epoch(freed["time"]) - lgtest.iso_to_epoch(forgiven["time"])
        print(f"share back {delay:.2f}s after the forgive (sample_interval {SAMPLE:g}s)")
        self.assertLessEqual(delay, SAMPLE + 0.5)
        self.assertEqual(self.quota(user.pw_uid), int(freed["limits"]["cpu_cores"] * 100000))
        self.assertGreater(freed["limits"]["cpu_cores"], THROTTLE)

    def test_an_exemption_lifts_the_limits_and_ends_by_itself(self):
        user = self.throttled_hog("lgtest4")
        mark = self.daemon.mark()
        code, out, err = self.ctl("exempt", "lgtest4", "--for", "3s", "--reason", "demo")
        self.assertEqual(code, 0, err)
        added = self.daemon.find(mark, event="exempt_added", uid=user.pw_uid)[0]
        self.assertEqual((added["by"], added["reason"]), ("root", "demo"))
        rows = {r["uid"]: r for r in self.ctl_json("status")["users"]}
        self.assertIsNotNone(rows[user.pw_uid]["exempt_until"])
        code, out, err = self.ctl("status")
        self.assertRegex(out, r"lgtest4 .* 1 throttled .*\d\d:\d\d:\d\dZ\s+\S+ \d\d:\d\d:\d\dZ")
        # The hog runs at the share while exempt...
        self.daemon.wait_event(2 * SAMPLE + 1, after=mark, event="limits_set", uid=user.pw_uid,
                               level=0)
        self.assertGreater(self.quota(user.pw_uid), int(THROTTLE * 100000))
        # ...until the exemption ends by itself, and the level's limits are back.
        self.daemon.wait_event(3 + 2 * SAMPLE + 1, after=mark, event="exempt_ended",
                               uid=user.pw_uid)
        self.daemon.wait_event(2 * SAMPLE + 1, after=mark, event="limits_set", uid=user.pw_uid,
                               level=1)
        self.assertEqual(self.quota(user.pw_uid), int(THROTTLE * 100000))
        self.assertIsNone(self.ctl_json("user", "lgtest4")["user"]["exempt_until"])

    def test_an_exemption_outlives_a_restart_and_an_admin_may_remove_it(self):
        user = self.users.add("lgtest5")
        admin = self.users.add(ADMIN_GROUP)  # its own group: a member of admin_group
        code, out, err = self.ctl("exempt", "lgtest5", "--for", "1h", "--reason", "workshop",
                                  user=admin)
        self.assertEqual(code, 0, err)
        self.daemon.stop()
        self.daemon.start()
        until = self.ctl_json("user", "lgtest5")["user"]["exempt_until"]
        self.assertAlmostEqual(lgtest.iso_to_epoch(until), time.time() + 3600, delta=60)
        mark = self.daemon.mark()
        code, out, err = self.ctl("exempt", "lgtest5", "--remove", user=admin)
        self.assertEqual(code, 0, err)
        removed = self.daemon.find(mark, event="exempt_removed", uid=user.pw_uid)[0]
        self.assertEqual((removed["by_uid"], removed["by"]), (admin.pw_uid, ADMIN_GROUP))
        self.assertIsNone(self.ctl_json("user", "lgtest5")["user"]["exempt_until"])

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
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 3)
        self.assertIn("cannot reach loginguardd", p.stderr)


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def connect(path, timeout=10):
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


class Flood(ControlCase):
    """1,000 requests of each bad kind and 200 idle connections."""

    COUNT = 1000
    IDLE = 200

    @classmethod
    def policy(cls):
        return lgtest.enforcing(cls.parent, cls.workdir)

    def sampled_times(self, stop, seen):
        """The daemon's sample times, from status, until stop is set."""
        request = b'{"version":1,"request":"status"}\n'
        while not stop.is_set():
            reply = exchange(self.socket, request)
            if reply:
                t = lgtest.iso_to_epoch(json.loads(reply)["sampled"])
                if not seen or seen[-1][1] != t:
                    seen.append((time.monotonic(), t))
            time.sleep(0.05)

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

    def test_bad_and_idle_connections_delay_no_sample_and_leak_nothing(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
        pid = self.daemon.proc.pid
        stop, seen = threading.Event(), []
        poller = threading.Thread(target=self.sampled_times, args=(stop, seen))
        poller.start()
        wait_for(lambda: len(seen) >= 3, 10, "three samples seen through status")
        fds_before = fd_count(pid)
        flood_start = time.time()
        idle = [connect(self.socket) for _ in range(self.IDLE)]
        malformed = self.run_kind(lambda i: [b"{not json\n", b"\xff\xfe\x00\n",
                                             b'{"version":1,"request":"status","all":1}\n',
                                             b'{"version":9,"request":"status"}\n'][i % 4])
        oversized = self.run_kind(lambda i: b"x" * (9000 + i))
        half = self.run_kind(lambda i: b'{"version":1,"requ', shut=True)
        # Never finished: written in part and held open until the end.
        unfinished = []
        for i in range(self.COUNT):
            try:
                s = connect(self.socket, timeout=5)
                s.sendall(b'{"version":1,')
                unfinished.append(s)
            except OSError:
                pass
        fds_peak = fd_count(pid)
        # Held past the daemon's 5 s deadline, so that it closes them too.
        time.sleep(6)
        flood_end = time.time()
        stop.set()
        poller.join()
        for s in idle + unfinished:
            s.close()
        answered = {
            "malformed": sum(1 for r in malformed if b'"code":"bad_' in r),
            "oversized": sum(1 for r in oversized if b'"code":"too_long"' in r),
            "half-written": sum(1 for r in half if b'"code":"bad_request"' in r),
        }
        during = [t for _, t in seen if flood_start <= t <= flood_end]
        gaps = [b[1] - a[1] for a, b in zip(seen, seen[1:])]
        late = [g - SAMPLE for g in gaps]
        print(f"flood: {self.COUNT} each of malformed, oversized, half-written and never "
              f"finished, {self.IDLE} idle; error replies {answered}; "
              f"{len(unfinished)} unfinished held")
        print(f"{len(during)} samples in the {flood_end - flood_start:.1f}s of the flood; "
              f"lateness between samples: median "
              f"{statistics.median(late) * 1000:.0f} ms, max {max(late) * 1000:.0f} ms")
        wait_for(lambda: fd_count(pid) <= fds_before, 15,
                 "the daemon's descriptors to come back to where they were")
        print(f"daemon descriptors: {fds_before} before, {fds_peak} during, "
              f"{fd_count(pid)} after")
        self.assertIsNone(self.daemon.proc.poll(), "the daemon died")
        self.assertLess(max(late), 0.5, f"a sample was late: gaps {gaps}")
        self.assertGreaterEqual(len(during), (flood_end - flood_start) / SAMPLE - 2,
                                "samples missing during the flood")
        self.assertLessEqual(fds_peak, fds_before + 64 + 1)
        # Every malformed and oversized request got its error (their
        # connections are the newest, never the one closed to make room).
        self.assertGreaterEqual(answered["malformed"], self.COUNT * 0.99)
        self.assertGreaterEqual(answered["oversized"], self.COUNT * 0.99)
        # And the socket still serves.
        self.assertIn("mode: enforce", self.ctl("status")[1])


if __name__ == "__main__":
    lgtest.run_tests()
