"""New programs through the kernel's proc connector, and polling without it
(issue: daemon CPU; DESIGN.md, Sampling item 4).

A process that runs a forbidden program only after a while (a shell that
sleeps, then execs it) is stopped within two sample intervals of its exec
with the connector, although the daemon's only sweep of /proc was at its
start (scan_interval 10 min): the exec event is what found it.  With
`proc_connector = no` the daemon lists /proc instead: a new forbidden
program is still stopped at the next sample, and one exec'd by a process
it already knew at the next sweep."""

import time

import lgtest
from lgtest import wait_for

SAMPLE = 1.0
SLEEP_BEFORE_EXEC = 2.5   # the shell is seen (as sh) before it execs


def policy(parent, workdir, connector, scan):
    # [violation] cpu well above what the light miner uses: nothing about
    # its usage makes the daemon look at its user's processes.
    return lgtest.enforcing(parent, workdir, scan_interval=scan,
                            proc_connector=connector) + """
[violation]
cpu = 4 cores
memory = 0
memory_pressure = 0
"""


class Base(lgtest.DaemonTestCase):
    connector = "yes"
    scan = "10m"

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

    def exec_later(self, user):
        """A shell that execs the miner (5 % of a core) after a sleep;
        returns the process and the time of its exec."""
        proc = self.procs.start(
            ["/bin/sh", "-c", f"sleep {SLEEP_BEFORE_EXEC}; exec {self.miner} 1 0.05"], user)
        wait_for(lambda: self.comm(proc.pid) == "sh", 5, "the shell to start")
        wait_for(lambda: self.comm(proc.pid) in ("lgminer", None), SLEEP_BEFORE_EXEC + 5,
                 "the exec", interval=0.02)
        return proc, time.time()

    def assert_stopped(self, user, proc, since, within):
        stopping = self.daemon.wait_event(within + 5, event="process_stopping", uid=user.pw_uid)
        self.assertEqual(stopping["process"]["pid"], proc.pid)
        self.assertEqual(stopping["process"]["exe"], self.miner)
        self.assertLessEqual(lgtest.iso_to_epoch(stopping["time"]) - since, within)
        self.assertEqual(proc.wait(10), -15)


class WithConnector(Base):
    def test_exec_of_a_forbidden_program_is_seen_at_the_next_sample(self):
        self.assertIn("new processes from the proc connector", self.started_message())
        self.assertEqual(self.daemon.find(event="proc_connector_error"), [])
        user = self.users.add("lgtest21")
        proc, exec_time = self.exec_later(user)
        self.assert_stopped(user, proc, exec_time, 2 * SAMPLE)

    def test_exec_from_a_thread_is_seen_too(self):
        # The kernel ends the old leader first (an exit event for the pid),
        # then the process goes on as the miner under the same pid.
        user = self.users.add("lgtest23")
        code = ("import os, threading, time\n"
                f"time.sleep({SLEEP_BEFORE_EXEC})\n"
                f"threading.Thread(target=os.execv, args=({self.miner!r}, "
                f"[{self.miner!r}, '1', '0.05'])).start()\n"
                "time.sleep(60)\n")
        proc = self.procs.start(["/usr/bin/python3", "-c", code], user)
        wait_for(lambda: self.comm(proc.pid) == "python3", 5, "python to start")
        wait_for(lambda: self.comm(proc.pid) in ("lgminer", None), SLEEP_BEFORE_EXEC + 5,
                 "the exec", interval=0.02)
        self.assert_stopped(user, proc, time.time(), 2 * SAMPLE)


class WithoutConnector(Base):
    connector = "no"
    scan = "8s"

    def test_polling_finds_new_and_execd_programs(self):
        self.assertIn("new processes by listing /proc", self.started_message())
        user = self.users.add("lgtest22")
        # Started as itself: the listing at the next sample finds it.
        started = time.time()
        direct = self.procs.start([self.miner, "1", "0.05"], user)
        self.assert_stopped(user, direct, started, 2 * SAMPLE)
        # Exec'd by a process already known: the next sweep finds it.
        mark = self.daemon.mark()
        proc, exec_time = self.exec_later(user)
        stopping = self.daemon.wait_event(8 + 2 * SAMPLE + 5, after=mark,
                                          event="process_stopping", uid=user.pw_uid)
        self.assertEqual(stopping["process"]["pid"], proc.pid)
        self.assertLessEqual(lgtest.iso_to_epoch(stopping["time"]) - exec_time, 8 + 2 * SAMPLE)
        self.assertEqual(proc.wait(10), -15)


if __name__ == "__main__":
    lgtest.run_tests()
