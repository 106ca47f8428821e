"""Stalling or confusing the daemon, done for real: a second instance
that would fight the first over the same cgroups, and processes that
rename themselves all the time with long hostile command lines."""

import os
import shutil
import subprocess
import time

import lgtest
from lgtest import Daemon

SAMPLE = 1.0


def policy(parent, workdir, state_dir=None):
    return f"""
[daemon]
mode = enforce
backend = cgroupfs
cgroup_parent = {parent}
sample_interval = {SAMPLE:g}s
scan_interval = 5s
min_uid = 1000
rules_dirs = {workdir}/rules.d
{f"state_dir = {state_dir}" if state_dir else ""}
[notify]
channels =
"""


def run_second(conf):
    """A second loginguardd on conf, in the foreground: (exit status, stderr)."""
    p = subprocess.run([lgtest.DAEMON, "--foreground", "--config", conf],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=20)
    return p.returncode, p.stderr


class OneInstance(lgtest.DaemonTestCase):
    @classmethod
    def policy(cls):
        return policy(cls.parent, cls.workdir)

    def test_a_second_daemon_on_the_same_state_refuses_to_start(self):
        code, err = run_second(self.daemon.conf)
        self.assertEqual(code, 1)
        self.assertIn(f"another loginguardd (pid {self.daemon.proc.pid})", err)
        self.assertIn("state directory", err)
        self.assertIsNone(self.daemon.proc.poll(), "the first daemon was disturbed")

    def test_a_second_daemon_on_the_same_cgroups_refuses_to_start(self):
        other = lgtest.make_workdir()
        try:
            os.makedirs(f"{other}/rules.d")
            second = Daemon(other, policy(self.parent, other, state_dir=f"{other}/state"))
            code, err = run_second(second.conf)
            self.assertEqual(code, 1)
            self.assertIn(f"another loginguardd (pid {self.daemon.proc.pid})", err)
            self.assertIn("cgroups", err)
            self.assertIsNone(self.daemon.proc.poll(), "the first daemon was disturbed")
        finally:
            shutil.rmtree(other, ignore_errors=True)


if __name__ == "__main__":
    lgtest.run_tests()
