"""New programs through the kernel's proc connector, and polling without it
(issue: daemon CPU; DESIGN.md, Sampling item 4).

A process that runs a forbidden program only after a while (a shell that
waits, then execs it) is stopped with the connector, although the daemon's
only sweep of /proc was at its start (scan_interval 10 min, far beyond any
wait here): the exec event is what found it.  With `proc_connector = no`
the daemon lists /proc instead: a new forbidden program is still stopped
before any sweep, and one exec'd by a process it already knew at the next
sweep.  (How soon after the exec or the start: make bench prints it.)"""

import errno
import os

import lgtest
from lgtest import wait_for

SAMPLE = 0.5
HANG = lgtest.HANG


def policy(parent, workdir, connector, scan, sample=SAMPLE, mode="enforce"):
    # [violation] cpu well above what the light miner uses: nothing about
    # its usage makes the daemon look at its user's processes.
    return lgtest.policy(lgtest.enforcing(parent, workdir, sample_interval=f"{sample:g}s",
                                          scan_interval=scan, proc_connector=connector,
                                          mode=mode),
                         violation=lgtest.violation(4))


class Base(lgtest.DaemonTestCase):
    connector = "yes"
    scan = "10m"   # no sweep after the one at the start while a test runs

    @classmethod
    def policy(cls):
        return policy(cls.parent, cls.workdir, cls.connector, cls.scan)

    @classmethod
    def daemon_rules(cls):
        return [{"name": "test-miner", "class": "forbidden", "comm": "lgminer"}]

    @classmethod
    def prepare(cls):
        cls.miner = lgtest.private_copy(lgtest.SPIN, cls.workdir, "lgminer")

    def started_message(self):
        return self.daemon.find(event="daemon_started")[-1]["message"]

    def comm(self, pid):
        try:
            return lgtest.read(f"/proc/{pid}/comm").strip()
        except FileNotFoundError:
            return None

    def go_fifo(self, name):
        """A fifo a test user's process waits on until the test says go."""
        path = os.path.join(self.workdir, name)
        os.mkfifo(path)
        os.chmod(path, 0o666)
        self.addCleanup(os.unlink, path)
        return path

    def go(self, fifo):
        """Say go through fifo, once its reader has it open."""
        def said():
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as e:
                if e.errno == errno.ENXIO:  # no reader yet
                    return False
                raise
            try:
                os.write(fd, b"go\n")
            finally:
                os.close(fd)
            return True
        wait_for(said, HANG, f"a reader of {fifo}")

    def known_then_exec(self, user, argv, comm, fifo):
        """Start argv (which execs the miner once told to through fifo) as
        user; once the daemon has sampled it under its first name twice,
        tell it to go, and return once it runs as the miner."""
        proc = self.procs.start(argv, user)
        wait_for(lambda: self.comm(proc.pid) == comm, HANG, f"{comm} to start")
        # Known to the daemon as what it was first (a sample lists it).
        self.daemon.wait_samples(2)
        self.go(fifo)
        wait_for(lambda: self.comm(proc.pid) in ("lgminer", None), HANG, "the exec",
                 interval=0.02)
        return proc

    def exec_later(self, user):
        """A shell that execs the miner (5 % of a core) when told to."""
        fifo = self.go_fifo("go-sh")
        return self.known_then_exec(
            user, ["/bin/sh", "-c", f"read go < {fifo}; exec {self.miner} 1 0.05"], "sh", fifo)

    def assert_stopped(self, user, proc, after=0):
        """proc is stopped as the miner: its program was read again (the
        event names the miner's path, not the shell's or python's)."""
        stopping = self.daemon.wait_event(HANG, after=after, event="process_stopping",
                                          uid=user.pw_uid)
        self.assertEqual(stopping["process"]["pid"], proc.pid)
        self.assertEqual(stopping["process"]["exe"], self.miner)
        self.assertEqual(proc.wait(HANG), -15)


class WithConnector(Base):
    def test_exec_of_a_forbidden_program_is_seen_without_a_sweep(self):
        self.assertIn("new processes from the proc connector", self.started_message())
        self.assertEqual(self.daemon.find(event="proc_connector_error"), [])
        user = self.users.add("lgtest21")
        proc = self.exec_later(user)
        self.assert_stopped(user, proc)

    def test_exec_from_a_thread_is_seen_too(self):
        # The kernel ends the old leader first (an exit event for the pid),
        # then the process goes on as the miner under the same pid.
        user = self.users.add("lgtest23")
        fifo = self.go_fifo("go-python")
        code = ("import os, threading, time\n"
                f"open({fifo!r}).read()\n"
                f"threading.Thread(target=os.execv, args=({self.miner!r}, "
                f"[{self.miner!r}, '1', '0.05'])).start()\n"
                "time.sleep(60)\n")
        proc = self.known_then_exec(user, ["/usr/bin/python3", "-c", code], "python3", fifo)
        self.assert_stopped(user, proc)


class EarlyBase(Base):
    """Samples four minutes apart: a forbidden program is judged when the
    connector reports its exec, in a sample brought forward, not at the
    next regular one, which no test here lives to see.  So the event
    comes within the hang guard only if the exec brought a sample
    forward, and the daemon's own count says it was no regular sample.
    (The delay from exec to SIGTERM: make bench prints it.)"""
    sample = 240.0  # below the policy's 5 min window, beyond any hang guard
    mode = "enforce"

    @classmethod
    def policy(cls):
        return policy(cls.parent, cls.workdir, cls.connector, cls.scan, cls.sample, cls.mode)

    def judged_early(self, user):
        # The start-up sample is behind us: the next is four minutes away.
        wait_for(lambda: self.daemon.samples() >= 1, HANG, "the first sample")
        proc = self.procs.start([self.miner, "1", "0.05"], user)
        event = self.daemon.wait_event(HANG, event="forbidden_process", uid=user.pw_uid)
        self.assertEqual(event["processes"][0]["pid"], proc.pid)
        # Judged by a sample after the start-up one, and every such sample
        # was brought forward: the next regular one is four minutes away,
        # and the event came within the hang guard.  (How many came
        # forward is not the point: the exec, the process arriving outside
        # its user's cgroup when enforcing, the user directory's first
        # answer about this new user each bring one; a busy machine can
        # take them one by one.)
        self.assertGreaterEqual(self.daemon.samples(), 2,
                                "judged by a sample the exec brought forward")
        return proc


class ExecJudgedAtOnce(EarlyBase):
    def test_a_forbidden_exec_is_stopped_before_the_next_sample(self):
        user = self.users.add("lgtest25")
        proc = self.judged_early(user)
        self.assert_stopped(user, proc)


class ExecJudgedAtOnceObserving(EarlyBase):
    mode = "observe"

    def test_a_forbidden_exec_is_reported_before_the_next_sample(self):
        user = self.users.add("lgtest26")
        proc = self.judged_early(user)
        self.assertIs(self.daemon.find(event="forbidden_process", uid=user.pw_uid)[0]["applied"],
                      False)
        self.assertTrue(lgtest.alive(proc.pid))


class WithoutConnector(Base):
    connector = "no"

    def test_polling_finds_new_programs_without_a_sweep(self):
        self.assertIn("new processes by listing /proc", self.started_message())
        user = self.users.add("lgtest22")
        # Started as itself: the listing at a sample finds it.
        direct = self.procs.start([self.miner, "1", "0.05"], user)
        self.assert_stopped(user, direct)


class WithoutConnectorSweeping(Base):
    connector = "no"
    scan = "2s"

    def test_polling_finds_execd_programs_at_a_sweep(self):
        self.assertIn("new processes by listing /proc", self.started_message())
        user = self.users.add("lgtest24")
        # Exec'd by a process already known: a sweep reads its program again.
        proc = self.exec_later(user)
        self.assert_stopped(user, proc)


if __name__ == "__main__":
    lgtest.run_tests()
