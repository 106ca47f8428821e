"""Two login nodes, one PostgreSQL database, for real (two daemons on
this machine, each with its own state directory and link): a violation
node A sees reaches node B within a second and B sets that user's limits
at once (B alone enforces here; A observes, so the two do not fight over
the user's processes); an admin's forgive on B reaches A; with the
database down each node says so once, keeps its records, and sends them
when it is back (issue 13).  Skipped where no PostgreSQL 15 server can be
run (tests/integration/pgserver.py)."""

import json
import os
import subprocess
import tempfile
import unittest

import lgtest
from lgtest import wait_for

try:
    import pgserver
except ImportError:  # the link's side is not in this tree
    pgserver = None

CTL = os.path.join(lgtest.TOP_BUILDDIR, "tools", "loginguardctl")
WINDOW = 3.0
THROTTLE = 0.5          # cores, level 1
FLAG_TIMEOUT = WINDOW + 2 + 15
SHARED_BOUND = 3.0      # s: a row stored reaches the other node within this
DOWN_BOUND = 15.0
UP_BOUND = 40.0         # the link's retries double to 30 s


def node_policy(node, database, daemon):
    return daemon + f"""
[level 1]
name = throttled
cpu = {THROTTLE} cores
stop = no
duration = 10m
[cluster]
database = {database}
node = {node}
"""


@unittest.skipIf(pgserver is None or not pgserver.available(),
                 "no PostgreSQL 15 server to run (or no link in this tree)")
class TwoNodes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = pgserver.PgServer()
        cls.users = lgtest.TestUsers()
        cls.daemons = []
        cls.top = lgtest.make_workdir()
        conf = os.path.join(cls.top, "init.conf")
        with open(conf, "w") as f:
            f.write(f"[cluster]\ndatabase = {cls.server.conninfo(pgserver.OWNER)}\n")
        p = subprocess.run([CTL, "--config", conf, "cluster", "init", "--grant", pgserver.NODE],
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            cls.server.teardown()
            raise AssertionError(f"cluster init: {p.stdout}{p.stderr}")
        database = cls.server.conninfo(pgserver.NODE)
        violation = f"""
[violation]
cpu = {{cpu}} cores
memory = 0
window = {WINDOW:g}s
memory_pressure = 0
"""
        # A judges (observe mode: it raises levels, touches no cgroup).
        cls.a = cls.start(node_policy("lgtest-a", database, """
[daemon]
mode = observe
sample_interval = 1s
scan_interval = 5s
min_uid = %d
""" % lgtest.TEST_UID_MIN + violation.format(cpu=1)))
        # B enforces, but would never find a violation of its own.
        cls.parent = f"lgtest-{os.getpid()}-twonodes"
        cls.b_dir = lgtest.make_workdir()
        cls.b = cls.start(node_policy("lgtest-b", database,
                                      lgtest.enforcing(cls.parent, cls.b_dir)
                                      + violation.format(cpu=1000)), cls.b_dir)

    @classmethod
    def start(cls, policy, workdir=None):
        workdir = workdir or lgtest.make_workdir()
        lgtest.write_rules(workdir, [])
        d = lgtest.Daemon(workdir, policy)
        d.start()
        cls.daemons.append(d)
        d.wait_event(20, event="cluster_up")
        return d

    @classmethod
    def tearDownClass(cls):
        for d in cls.daemons:
            d.stop()
        lgtest.remove_cgroups(cls.parent)
        cls.users.remove_all()
        cls.server.teardown()
        if not os.environ.get("LG_KEEP"):
            for d in cls.daemons:
                subprocess.run(["rm", "-rf", d.workdir])
            subprocess.run(["rm", "-rf", cls.top])

    def setUp(self):
        self.procs = lgtest.Processes()

    def tearDown(self):
        self.procs.stop_all()

    def ctl(self, daemon, *args):
        p = subprocess.run([CTL, "--socket", f"{daemon.workdir}/control.sock"] + list(args),
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def status(self, daemon):
        return json.loads(self.ctl(daemon, "--json", "status", "--all"))

    def quota(self, uid):
        path = os.path.join(lgtest.cgroup_dirs(self.parent)["cpu"], f"user-{uid}",
                            "cpu.cfs_quota_us")
        return int(lgtest.read(path))

    def test_a_violation_on_one_node_limits_the_user_on_the_other(self):
        user = self.users.add("lgtestnodes1")
        spin = lgtest.private_copy(lgtest.SPIN, self.a.workdir, "spin")
        self.procs.start([spin, "2"], user)
        b_mark = self.b.mark()
        self.a.wait_event(FLAG_TIMEOUT, event="violation", uid=user.pw_uid)
        got = self.b.wait_event(SHARED_BOUND, after=b_mark, event="standing_received",
                                uid=user.pw_uid)
        self.assertEqual((got["from_node"], got["level"]), ("lgtest-a", 1))
        # The limits at once, not at B's next decision (it has none).
        self.b.wait_event(SHARED_BOUND, after=b_mark, event="limits_set", uid=user.pw_uid,
                          level=1)
        self.assertEqual(self.quota(user.pw_uid), int(THROTTLE * 100000))
        row = [u for u in self.status(self.b)["users"] if u["uid"] == user.pw_uid][0]
        self.assertEqual(row["level"], 1)
        self.assertEqual(self.status(self.b)["cluster"],
                         {"node": "lgtest-b", "link": "up", "queued": 0})

        # An admin on B forgives: A hears it, B lifts the limits.
        a_mark = self.a.mark()
        self.ctl(self.b, "forgive", "lgtestnodes1", "--reason", "test")
        got = self.a.wait_event(SHARED_BOUND, after=a_mark, event="standing_received",
                                uid=user.pw_uid)
        self.assertEqual((got["from_node"], got["level"]), ("lgtest-b", 0))
        self.b.wait_event(SHARED_BOUND, after=a_mark, event="limits_set", uid=user.pw_uid,
                          level=0)
        changes = self.server.psql(
            f"SELECT node, kind, applied FROM loginguard.changes WHERE uid = {user.pw_uid} "
            "ORDER BY rev").splitlines()
        self.assertEqual(changes, ["lgtest-a|raise|t", "lgtest-b|forgive|t"])
        # Each node's events are in the database too, under its name.
        names = self.server.psql(
            f"SELECT node, name FROM loginguard.events WHERE uid = {user.pw_uid}").splitlines()
        self.assertIn("lgtest-a|violation", names)
        self.assertIn("lgtest-b|user_forgiven", names)

    def test_the_database_down_and_back(self):
        a_mark, b_mark = self.a.mark(), self.b.mark()
        self.server.stop("immediate")
        try:
            self.a.wait_event(DOWN_BOUND, after=a_mark, event="cluster_down")
            # An admin's change while it is down: done here, queued.
            user = self.users.add("lgtestnodes2")
            self.ctl(self.a, "exempt", "lgtestnodes2", "--for", "1h", "--reason", "test")
            cluster = self.status(self.a)["cluster"]
            self.assertEqual(cluster["link"], "down")
            self.assertGreaterEqual(cluster["queued"], 1)
        finally:
            self.server.start()
        wait_for(lambda: self.a.find(after=a_mark, event="cluster_up"), UP_BOUND, "A up again")
        wait_for(lambda: self.status(self.a)["cluster"]["queued"] == 0, 10, "A's queue sent")
        self.assertEqual(len(self.a.find(after=a_mark, event="cluster_down")), 1)
        self.assertEqual(self.server.psql(
            f"SELECT exempt_until > 0 FROM loginguard.standing WHERE uid = {user.pw_uid}").strip(),
            "t")
        # B hears of it once it is back too.
        wait_for(lambda: self.b.find(after=b_mark, event="standing_received",
                                     uid=user.pw_uid), UP_BOUND, "B got the exemption")


if __name__ == "__main__":
    lgtest.run_tests()
