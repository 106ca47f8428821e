"""A login node for the cluster tests and benchmarks: a pid namespace with
its own /proc, a daemon of its own (state directory, cgroup parent,
control socket) run into it, and the test users' processes started in it.
Each daemon sees only the processes of its node, as on two machines.

The kernel refuses its process events and exit records inside a pid
namespace: the daemons there list /proc at every sample, as they do on a
kernel without them."""

import json
import os
import signal
import subprocess

import lgtest
from lgtest import HANG, Daemon, Processes, wait_for

CTL = os.path.join(lgtest.TOP_BUILDDIR, "tools", "loginguardctl")

# The namespace's init: reaps what is orphaned in it until told to end.
NODE_INIT = """
import os, signal
signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
signal.signal(signal.SIGCHLD, lambda *a: None)
while True:
    try:
        os.wait()
    except ChildProcessError:
        signal.pause()
"""


def children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(x) for x in f.read().split()]


class Node:
    """A login node: a pid namespace with its own /proc, its daemon (run
    into it by nsenter) and the test users' processes started in it."""

    def __init__(self, name, policy):
        """policy(parent, workdir): the node's drop-in."""
        self.name = name
        self.fixture = lgtest.Fixture(name, users=False)
        self.workdir = self.fixture.workdir
        self.parent = self.fixture.parent
        lgtest.write_rules(self.workdir, [])
        self.init = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc",
                                      "--kill-child", "/usr/bin/python3", "-c", NODE_INIT],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        self.init_pid = wait_for(lambda: children(self.init.pid), HANG,
                                 f"node {name}'s namespace")[0]
        enter = ["nsenter", "-t", str(self.init_pid), "-p", "-m", "--"]
        self.enter = enter
        self.daemon = Daemon(self.workdir, policy(self.parent, self.workdir), wrapper=enter,
                             start_timeout=HANG)
        self.procs = Processes()
        self.pid = None

    def start(self):
        self.daemon.start()
        self.pid = children(self.daemon.proc.pid)[0]  # nsenter's child: the daemon

    def stop(self):
        """SIGTERM to the daemon itself (nsenter passes on no signal)."""
        if self.daemon.proc and self.daemon.proc.poll() is None:
            os.kill(self.pid, signal.SIGTERM)
            self.daemon.proc.wait(timeout=HANG)
        return self.daemon.stop()

    def kill(self):
        os.kill(self.pid, signal.SIGKILL)
        self.daemon.proc.wait(timeout=HANG)
        self.daemon.stop()

    def run(self, user, argv):
        """argv as user, on this node."""
        return self.procs.start(self.enter + [
            "setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups",
            "--"] + argv)

    def ctl(self, *args, check=True):
        p = subprocess.run([CTL, "--socket", f"{self.workdir}/control.sock"] + list(args),
                           capture_output=True, text=True, timeout=HANG, cwd="/")
        if check and p.returncode != 0:
            raise AssertionError(f"loginguardctl {' '.join(args)} on {self.name}: "
                                 f"{p.returncode} {p.stderr}")
        return p.stdout

    def standing(self, user):
        rows = json.loads(self.ctl("status", "--all", "--json"))
        rows = rows.get("users", rows) if isinstance(rows, dict) else rows
        for r in rows:
            if r["uid"] == user.pw_uid:
                return r
        return None

    def cgroup_file(self, user, controller, name):
        d = lgtest.cgroup_dirs(self.parent)[controller]
        return lgtest.read(f"{d}/user-{user.pw_uid}/{name}").strip()

    def close(self):
        self.procs.stop_all()
        if self.pid:
            self.stop()
        # The namespace's init ends it (unshare passes on no signal).
        os.kill(self.init_pid, signal.SIGTERM)
        self.init.wait(timeout=HANG)
        self.fixture.close()
