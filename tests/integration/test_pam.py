#!/usr/bin/python3
"""pam_loginguard with the real daemon: a real throttle, real cgroups, real
test users, the real PAM library through pam_wrapper (service files in a
private directory; /etc/pam.d is untouched) and lg-pam, a libpamtest
driver that prints what the user would see."""
import datetime
import json
import os
import signal
import socket
import time

import lgtest
import pamenv

SAMPLE = 0.5
WINDOW = 2.0
CPU = 0.5               # cores, the violation threshold (spin 2 gets twice that on a busy node)
THROTTLE = 0.25         # cores, level 1
HANG = lgtest.HANG
FLAG_TIMEOUT = WINDOW + HANG
BANNER = "Login node of the test cluster: heavy work goes to Slurm."
ADMIN = "lgtestadm"     # a user whose own group is admin_group
EXEMPT = "lgtestex"


def hhmm(epoch):
    return datetime.datetime.fromtimestamp(epoch).strftime("%H:%M")


class PamCase(lgtest.DaemonTestCase):
    @classmethod
    def make_daemon(cls):
        # Started again by a test: a hang guard, not a figure.
        return lgtest.Daemon(cls.workdir, cls.policy(), start_timeout=HANG)

    @classmethod
    def prepare(cls):
        cls.socket = f"{cls.workdir}/control.sock"
        cls.env = pamenv.PamEnv(cls.workdir)

    def pam(self, user, *steps, silent=False, **options):
        """lg-pam for user through a service whose lines carry options
        (socket= this daemon's by default)."""
        options.setdefault("socket", self.socket)
        words = [f"{k}={v}" for k, v in sorted(options.items())]
        name = "lg-" + "-".join(w.replace("/", "_").replace("=", "_") for w in words)[-200:]
        self.env.module_service(name, words)
        return self.env.run(name, user, *steps, silent=silent)

    def user_cgroup(self, controller, uid):
        return os.path.join(lgtest.cgroup_dirs(self.parent)[controller], f"user-{uid}")

    def assert_placed(self, step, uid):
        """Every controller's line of the caller's /proc/self/cgroup, read
        right after open_session returned, names the user's cgroup."""
        for c, d in lgtest.cgroup_dirs(self.parent).items():
            self.assertEqual(step.cgroup(c), f"{d}/user-{uid}"[len(f"/sys/fs/cgroup/{c}"):],
                             step)

    def assert_not_placed(self, step, uid):
        for line in step.cgroups:
            self.assertNotIn(f"/user-{uid}", line, step)


class Standing(PamCase):
    """A user throttled for real, whose notice went to the login channel."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        lgtest.favour_cpu(cls.parent)

    @classmethod
    def policy(cls):
        return lgtest.policy(lgtest.enforcing(cls.parent, cls.workdir,
                                              sample_interval=f"{SAMPLE:g}s"),
                             **lgtest.throttle_policy(CPU, WINDOW, THROTTLE),
                             notify={"channels": "login", "login_banner": BANNER})

    def throttled_hog(self, name):
        user = self.users.add(name)
        self.procs.start([self.spin, "2"], user)
        violation = self.daemon.wait_event(FLAG_TIMEOUT, event="violation", uid=user.pw_uid)
        self.assert_full_window(violation, WINDOW, CPU)
        self.daemon.wait_event(HANG, event="limits_set", uid=user.pw_uid, level=1)
        self.daemon.wait_event(HANG, event="notice", uid=user.pw_uid, kind="throttled",
                               channel="login", outcome="sent")
        return user, lgtest.iso_to_epoch(violation["until"])

    def test_throttled_user_sees_standing_and_notice_once(self):
        user, until = self.throttled_hog("lgtest1")
        # PAM_SILENT: nothing shown, and the notice stays unread.
        quiet = self.pam(user.pw_name, "open", "close", silent=True).step("open")
        self.assertEqual((quiet.rc, quiet.messages), (pamenv.PAM_SUCCESS, []), quiet)
        first = self.pam(user.pw_name, "open", "close").step("open")
        self.assertEqual(first.rc, pamenv.PAM_SUCCESS, first)
        self.assertEqual(first.infos[0], BANNER, first)
        standing = first.infos[1]
        self.assertIn(f"throttled until {hhmm(until)} (level throttled)", standing)
        self.assertIn(f"CPU {THROTTLE:g} cores", standing)
        notices = first.infos[2:]
        self.assertEqual(len(notices), 1, first)
        self.assertTrue(notices[0].startswith(
            f"Your processes on {socket.gethostname()} are limited until {hhmm(until)}\n\n"),
            notices[0])
        self.assertIn("sbatch", notices[0])
        # The next login: the standing again, the notice no more.
        second = self.pam(user.pw_name, "open", "close").step("open")
        self.assertEqual(second.infos, [BANNER, standing], second)

    def test_session_lands_in_the_users_cgroup(self):
        user = self.users.add("lgtest2")
        opened = self.pam(user.pw_name, "open", "close").step("open")
        self.assertEqual(opened.rc, pamenv.PAM_SUCCESS, opened)
        self.assert_placed(opened, user.pw_uid)
        # Made with the user's limits: the standing share's quota.
        quota = int(lgtest.read(os.path.join(self.user_cgroup("cpu", user.pw_uid),
                                             "cpu.cfs_quota_us")))
        self.assertGreater(quota, 0)
        # A normal standing shows the banner only.
        self.assertEqual(opened.messages, [("info", BANNER)])

    def test_a_user_cannot_ask_for_someone_elses_session(self):
        victim = self.users.add("lgtest3")
        asker = self.users.add("lgtest4")
        mark = self.daemon.mark()
        reply = self.ask_as(asker, {"version": 1, "request": "session",
                                    "user": victim.pw_uid})
        self.assertFalse(reply["ok"], reply)
        self.daemon.wait_event(HANG, after=mark, event="control_refused", uid=asker.pw_uid)
        # Their own: answered, but a user's process is never moved.
        own = self.ask_as(asker, {"version": 1, "request": "session", "user": asker.pw_uid})
        self.assertTrue(own["ok"], own)
        self.assertFalse(own["placed"])

    def ask_as(self, user, request):
        """One request from a process that has become user."""
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(r)
                os.setgroups([])
                os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
                os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
                s = socket.socket(socket.AF_UNIX)
                s.settimeout(HANG)
                s.connect(self.socket)
                s.sendall(json.dumps(request).encode() + b"\n")
                os.write(w, s.makefile("rb").readline())
            finally:
                os._exit(0)
        os.close(w)
        with os.fdopen(r, "rb") as f:
            line = f.read()
        os.waitpid(pid, 0)
        return json.loads(line)

    def test_hung_daemon_is_given_up_with_one_line(self):
        # (How long the user waits: make bench prints it.)
        user = self.users.add("lgtest5")
        # Stopped, the daemon is hung for real: the kernel still accepts
        # connections into its queue, and nothing answers until both runs
        # are over; so each run's end is the module giving up on its own.
        os.kill(self.daemon.proc.pid, signal.SIGSTOP)
        try:
            opened = self.pam(user.pw_name, "open", "close", timeout="500ms")
            refused = self.pam(user.pw_name, "open", timeout="500ms", fail="closed")
        finally:
            os.kill(self.daemon.proc.pid, signal.SIGCONT)
        step = opened.step("open")
        self.assertEqual(step.rc, pamenv.PAM_SUCCESS, opened)
        self.assertEqual(step.messages, [], opened)
        self.assertEqual(len(opened.syslog), 1, opened)
        self.assertIn("timed out", opened.syslog[0][1])
        self.assertIn("fail=open", opened.syslog[0][1])
        step = refused.step("open")
        self.assertEqual(step.rc, pamenv.PAM_SESSION_ERR, refused)
        self.assertEqual(len(refused.syslog), 1, refused)
        self.assertIn("timed out", refused.syslog[0][1])
        self.assertIn("fail=closed", refused.syslog[0][1])
        self.assertEqual(len(step.errors), 1, refused)
        self.assertEqual(step.infos, [], refused)


class DenyLevel(PamCase):
    """Levels loaded from a state file written before the daemon starts,
    on the shipped ladder (3 is restricted)."""

    @classmethod
    def policy(cls):
        return lgtest.policy(lgtest.enforcing(cls.parent, cls.workdir, admin_group=ADMIN),
                             exempt={"users": EXEMPT}, notify={"channels": ""})

    @classmethod
    def prepare(cls):
        super().prepare()
        cls.until = time.time() + 3600
        cls.restricted = cls.users.add("lgtest6")
        cls.free = cls.users.add("lgtest7")
        cls.admin = cls.users.add(ADMIN)
        cls.exempt = cls.users.add(EXEMPT)
        now, until = int(time.time() * 1e6), int(cls.until * 1e6)
        users = [{"uid": u.pw_uid, "level": 3, "since": now, "until": until,
                  "quiet_since": 0, "last_violation": now, "violations": 3,
                  "exempt_until": 0,
                  "last": {"reason": "cpu", "cpu": 2.0, "memory": 0, "window": 60000000}}
                 for u in (cls.restricted, cls.admin, cls.exempt)]
        with open(f"{cls.workdir}/state.json", "w") as f:
            json.dump({"version": 1, "saved": now, "users": users}, f)

    def test_restricted_user_is_refused_with_why_and_until_when(self):
        mark = self.daemon.mark()
        account = self.pam(self.restricted.pw_name, "account", deny_level=3).step("account")
        self.assertEqual(account.rc, pamenv.PAM_PERM_DENIED, account)
        self.assertEqual(len(account.errors), 1, account)
        self.assertIn(f"refused until {hhmm(self.until)} (level restricted)", account.errors[0])
        event = self.daemon.wait_event(HANG, after=mark, event="login_refused",
                                       uid=self.restricted.pw_uid)
        self.assertEqual((event["level"], event["deny_level"]), (3, 3))
        # A higher deny_level lets the same user in.
        account = self.pam(self.restricted.pw_name, "account", deny_level=4).step("account")
        self.assertEqual(account.rc, pamenv.PAM_SUCCESS, account)

    def test_unrestricted_admin_and_exempt_users_get_in(self):
        for user in (self.free, self.admin, self.exempt):
            run = self.pam(user.pw_name, "account", "open", "close", deny_level=3)
            self.assertEqual([s.rc for s in run.steps], [pamenv.PAM_SUCCESS] * 3, run)
            self.assertEqual(run.step("account").messages, [], run)
        # The admin is let in, but limited like anyone at that level, and told;
        # the exempt user is neither.
        admin = self.pam(self.admin.pw_name, "open", "close").step("open")
        self.assertIn("(level restricted)", admin.infos[0])
        exempt = self.pam(self.exempt.pw_name, "open", "close").step("open")
        self.assertEqual(exempt.messages, [])

    def test_restricted_users_session_shows_the_level(self):
        opened = self.pam(self.restricted.pw_name, "open", "close").step("open")
        self.assertEqual(len(opened.infos), 1, opened)
        self.assertIn(f"until {hhmm(self.until)} (level restricted)", opened.infos[0])
        self.assertIn("CPU 0.5 cores, memory 2.0G", opened.infos[0])

    def test_z_daemon_down_fail_open_lets_in_and_the_session_is_adopted_later(self):
        user = self.users.add("lgtest8")
        self.daemon.stop(timeout=HANG)
        try:
            opened = self.pam(user.pw_name, "account", "open", "close", deny_level=3)
            closed = self.pam(user.pw_name, "account", deny_level=3, fail="closed")
            # What the session's shell would have started meanwhile.
            shell = self.procs.start(["sleep", "600"], user)
        finally:
            self.daemon.start()
        self.assertEqual([s.rc for s in opened.steps], [pamenv.PAM_SUCCESS] * 3, opened)
        self.assert_not_placed(opened.step("open"), user.pw_uid)
        # One line for each step that asked (account, open), none for close.
        self.assertEqual(len(opened.syslog), 2, opened)
        self.assertTrue(all("fail=open" in text for _, text in opened.syslog), opened)
        self.assertEqual(closed.step("account").rc, pamenv.PAM_PERM_DENIED, closed)
        self.assertEqual(len(closed.syslog), 1, closed)
        procs = os.path.join(self.user_cgroup("cpu", user.pw_uid), "cgroup.procs")
        # The daemon's sweep (every scan_interval) adopts it.
        lgtest.wait_for(lambda: os.path.exists(procs) and
                        str(shell.pid) in lgtest.read(procs).split(), HANG,
                        "the session's process in the user's cgroup")


if __name__ == "__main__":
    pamenv.require_pam_wrapper()
    lgtest.run_tests()
