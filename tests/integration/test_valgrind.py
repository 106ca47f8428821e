"""The daemon under valgrind's memcheck, doing its whole job for real: in
enforce mode on real cgroups it throttles a test user's hog, stops a
forbidden program with a long hostile command line, tells both users on
every channel that forks (email) or writes (login), reloads its config
(a good one, then a broken one), and stops.  Every process valgrind ran
(the daemon and the children it forked: the command line reader, the
mail child) must end with no memory error and no leak.

Only in a plain build: a sanitizer build already checks the same things
its own way, and valgrind cannot run ASan's binaries."""

import glob
import os
import shutil
import signal

import lgtest
from lgtest import Daemon

SUPPRESSIONS = os.path.join(lgtest.TOP_SRCDIR, "tests", "valgrind.supp")
SAMPLE = 0.5
WINDOW = 2.0
# valgrind makes the daemon some twenty times slower: no figure here
# depends on it, and every wait is a hang guard.
HANG = lgtest.HANG


def policy(parent, workdir):
    # spin 2 gets a core when one other session takes the other, and more
    # than the threshold with five other sessions wanting a core each.
    return lgtest.policy(
        lgtest.enforcing(parent, workdir, sample_interval=f"{SAMPLE:g}s"),
        violation=lgtest.violation(0.3, WINDOW),
        levels=[lgtest.level("throttled", cpu=0.15, memory="1G", stop=False, duration="10m")],
        notify={"channels": "email, login", "sendmail": f"{workdir}/sendmail -i -t",
                "rate_limit": "0s"})


class Valgrind(lgtest.DaemonTestCase):
    @classmethod
    def setUpClass(cls):
        if os.environ.get("LG_SANITIZERS"):
            raise lgtest.unittest.SkipTest("a sanitizer build: valgrind cannot run it")
        if not shutil.which("valgrind"):
            raise lgtest.unittest.SkipTest("valgrind is not installed")
        super().setUpClass()

    @classmethod
    def policy(cls):
        return policy(cls.parent, cls.workdir)

    @classmethod
    def daemon_rules(cls):
        return [{"name": "test-miner", "class": "forbidden", "comm": "lgminer"}]

    @classmethod
    def prepare(cls):
        with open(f"{cls.workdir}/sendmail", "w") as f:
            f.write("#!/bin/sh\ncat > /dev/null\n")
        os.chmod(f"{cls.workdir}/sendmail", 0o755)
        cls.logs = f"{cls.workdir}/valgrind"
        os.mkdir(cls.logs)

    @classmethod
    def make_daemon(cls):
        return Daemon(cls.workdir, cls.policy(), start_timeout=HANG, wrapper=[
            "valgrind", "--quiet", "--leak-check=full", "--show-leak-kinds=definite,indirect",
            "--errors-for-leak-kinds=definite,indirect", f"--suppressions={SUPPRESSIONS}",
            f"--log-file={cls.logs}/%p.log"])

    def valgrind_reports(self):
        """What valgrind said of each process it ran, by pid: with --quiet,
        only errors and leaks ("==PID== ..." lines; "--PID--" lines are
        valgrind's notes about itself, such as the syscalls it does not
        know)."""
        reports = {}
        for path in glob.glob(f"{self.logs}/*.log"):
            with open(path) as f:
                reports[os.path.basename(path)] = "".join(
                    line for line in f if line.startswith("=="))
        return reports

    def test_a_whole_run_is_clean(self):
        self.maxDiff = None
        hog_user = self.users.add("lgtest50")
        miner_user = self.users.add("lgtest51")
        hog = self.procs.start([self.spin, "2", "1", "300", "x" * 20000], hog_user)
        self.daemon.wait_event(WINDOW + HANG, event="limits_set", uid=hog_user.pw_uid, level=1)
        miner = lgtest.private_copy(lgtest.SPIN, self.workdir, "lgminer")
        self.procs.start([miner, "1", "0.05", "600", "\x1b[2J" * 5000], miner_user)
        self.daemon.wait_event(HANG, event="forbidden_process", uid=miner_user.pw_uid)
        # valgrind 3.19 (Debian 12) does not know pidfd_open, and without a
        # pidfd the daemon signals no one else's process: stop_error.
        lgtest.wait_for(lambda: self.daemon.find(event="process_stopping", uid=miner_user.pw_uid)
                        or self.daemon.find(event="stop_error", uid=miner_user.pw_uid),
                        HANG, "the stop, or why not")
        self.daemon.wait_event(HANG, event="notice", uid=miner_user.pw_uid, channel="email",
                               outcome="sent")
        mark = self.daemon.mark()
        self.daemon.proc.send_signal(signal.SIGHUP)
        self.daemon.wait_event(HANG, after=mark, event="config_reloaded")
        self.daemon.write_dropin("99-broken.conf", "[violation]\ncpu = 2 cors\n")
        mark = self.daemon.mark()
        self.daemon.proc.send_signal(signal.SIGHUP)
        self.daemon.wait_event(HANG, after=mark, event="config_error")
        os.remove(f"{self.workdir}/conf.d/99-broken.conf")
        hog.kill()
        self.assertEqual(self.daemon.stop(timeout=HANG), 0)
        reports = self.valgrind_reports()
        self.assertGreaterEqual(len(reports), 2, "the daemon and its command line reader")
        for name, text in reports.items():
            self.assertEqual(text.strip(), "", f"valgrind on {name}")


if __name__ == "__main__":
    lgtest.run_tests()
