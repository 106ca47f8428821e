"""Two login nodes sharing one standing through a real PostgreSQL 15 server
(pgserver.py), each node a daemon of its own with its own state directory,
cgroup parent and control socket (issue: one policy across all login
nodes).

A node here is a pid namespace with its own /proc: each daemon sees only
the processes started on its node, as on two machines, so a hog on node A
is judged by A alone and B learns of it only through the database.  Real
test users, real processes, real cgroups (below this run's own), a real
server stopped and started again.  The daemons cannot use the kernel's
process events or exit records inside a pid namespace (the kernel refuses
them there); they list /proc at every sample, as they do on a kernel
without them."""

import json
import os
import subprocess
import unittest
from collections import Counter

import lgtest
import pgserver
from clusternode import CTL, Node
from lgtest import wait_for
from pgserver import NODE, OWNER

SAMPLE = 0.5
WINDOW = 2.0
CPU = 0.5                # cores, the violation threshold (spin 2 gets twice that on a busy node)
THROTTLE = 0.3           # cores at level 1: a throttled hog is no violation again
HANG = lgtest.HANG
FLAG_TIMEOUT = WINDOW + HANG
# (How soon a decision on one node reaches the other, and how often a node
# samples while the database is down: make bench prints them.)


def policy(parent, workdir, conninfo, name):
    return lgtest.policy(
        lgtest.enforcing(parent, workdir, sample_interval=f"{SAMPLE}s", scan_interval="2s",
                         events_per_user=0),
        violation=lgtest.violation(CPU, WINDOW),
        levels=[lgtest.throttled(THROTTLE),
                lgtest.level("restricted", cpu=0.2, stop=False, duration="10m")],
        cluster={"database": conninfo, "node": name, "link_user": lgtest.LINK_USER})


def event_key(e):
    return (e["time"], e["event"], e.get("uid"))


class TwoNodes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not pgserver.available():
            raise unittest.SkipTest("PostgreSQL 15 (postgresql-15) is not installed")
        lgtest.Fixture.of(cls)
        cls.users.add_link_user()
        cls.server = pgserver.PgServer()
        cls.addClassCleanup(cls.server.teardown)
        subprocess.run([CTL, "--config", cls.owner_config(), "cluster", "init", "--grant", NODE],
                       check=True, capture_output=True, timeout=60)
        cls.a = Node("nodea", cls.node_policy("nodea"))
        cls.addClassCleanup(cls.a.close)
        cls.b = Node("nodeb", cls.node_policy("nodeb"))
        cls.addClassCleanup(cls.b.close)
        cls.spin = lgtest.private_copy(lgtest.SPIN, cls.a.workdir, "spin")
        for n in (cls.a, cls.b):
            n.start()
            n.daemon.wait_event(HANG, event="cluster_up")
        lgtest.favour_cpu(cls.a.parent)  # where the hogs run

    @classmethod
    def node_policy(cls, name):
        return lambda parent, workdir: policy(parent, workdir, cls.server.conninfo(NODE), name)

    @classmethod
    def owner_config(cls):
        return lgtest.write_config(os.path.join(cls.server.dir, "owner.conf"),
                                   cluster={"database": cls.server.conninfo(OWNER)})

    def tearDown(self):
        self.a.procs.stop_all()
        self.b.procs.stop_all()
        lgtest.assert_none_left(self.users.uids(), self.id())

    def hog_on_a(self, user):
        """A hog of user on A, and A's violation for it (after a whole
        window above the threshold, by its own figures)."""
        mark = self.a.daemon.mark()
        self.a.run(user, [self.spin, "2"])
        v = self.a.daemon.wait_event(FLAG_TIMEOUT, after=mark, event="violation",
                                     uid=user.pw_uid)
        self.assert_full_window(v)
        return v

    def assert_full_window(self, violation):
        """After a whole window above the threshold, by the event's own
        figures (lgtest's check, for a class with two daemons)."""
        lgtest.DaemonTestCase.assert_full_window(self, violation, WINDOW, CPU)

    def test_hog_on_a_limits_b(self):
        user = self.users.add("lgtestcl1")
        mark_b = self.b.daemon.mark()
        self.b.run(user, ["sleep", "1000"])  # the user's session on B
        v = self.hog_on_a(user)
        self.b.daemon.wait_event(HANG, after=mark_b, event="limits_set", uid=user.pw_uid,
                                 level=1)
        # B learned it through the database: the row A's violation made.
        got = self.b.daemon.wait_event(HANG, after=mark_b, event="standing_received",
                                       uid=user.pw_uid, from_node="nodea", level=1)
        self.assertEqual(got["until"], v["until"])
        self.assertEqual(self.b.standing(user)["level"], 1)
        for c in ("cpu",):
            self.assertEqual(self.b.cgroup_file(user, c, "cpu.cfs_quota_us"),
                             self.a.cgroup_file(user, c, "cpu.cfs_quota_us"))

    def test_forgive_on_b_lifts_a(self):
        user = self.users.add("lgtestcl2")
        mark_b = self.b.daemon.mark()
        self.hog_on_a(user)
        self.b.daemon.wait_event(HANG, after=mark_b, event="standing_received", uid=user.pw_uid)
        mark_a = self.a.daemon.mark()
        self.b.ctl("forgive", user.pw_name, "--reason", "test")
        self.a.daemon.wait_event(HANG, after=mark_a, event="standing_received",
                                 uid=user.pw_uid, from_node="nodeb", level=0)
        self.a.daemon.wait_event(HANG, after=mark_a, event="limits_set", uid=user.pw_uid,
                                 level=0)
        self.assertEqual(self.a.standing(user)["level"], 0)

    def test_exempt_for_a_while_ends_on_both(self):
        user = self.users.add("lgtestcl3")
        marks = {n.name: n.daemon.mark() for n in (self.a, self.b)}
        self.a.ctl("exempt", user.pw_name, "--for", "2s", "--reason", "test")
        added = self.a.daemon.wait_event(HANG, after=marks["nodea"], event="exempt_added",
                                         uid=user.pw_uid)
        # B holds the same end; each node ends it by its own clock at that
        # time (or at once, should the row come after it).
        got = self.b.daemon.wait_event(HANG, after=marks["nodeb"], event="standing_received",
                                       uid=user.pw_uid, from_node="nodea")
        self.assertEqual(got["exempt_until"], added["until"])
        for n in (self.a, self.b):
            n.daemon.wait_event(HANG, after=marks[n.name], event="exempt_ended",
                                uid=user.pw_uid)
            s = n.standing(user)  # gone from status --all, or shown unexempt
            self.assertTrue(s is None or s["exempt_until"] is None, s)

    def test_database_down_a_enforces_then_both_agree(self):
        user = self.users.add("lgtestcl4")
        marks = {n.name: n.daemon.mark() for n in (self.a, self.b)}
        self.server.stop("immediate")
        try:
            self.a.daemon.wait_event(HANG, after=marks["nodea"], event="cluster_down")
            # A keeps sampling and enforcing on its own: a whole window of
            # its own samples after the database went.
            self.hog_on_a(user)
            self.a.daemon.wait_event(HANG, after=marks["nodea"], event="limits_set",
                                     uid=user.pw_uid, level=1)
            # Forgiven on A alone, the hog is a violation again.
            mark = self.a.daemon.mark()
            self.a.ctl("forgive", user.pw_name, "--reason", "while down")
            again = self.a.daemon.wait_event(FLAG_TIMEOUT, after=mark, event="violation",
                                             uid=user.pw_uid)
            self.assert_full_window(again)
            self.a.daemon.wait_event(HANG, after=mark, event="limits_set", uid=user.pw_uid,
                                     level=again["level_after"])
            self.a.ctl("exempt", user.pw_name, "--for", "1h", "--reason", "while down")
            self.a.ctl("exempt", user.pw_name, "--remove", "--reason", "while down")
        finally:
            self.server.start()
        # Said once, not at each of the link's tries.
        self.assertEqual(len(self.a.daemon.find(after=marks["nodea"], event="cluster_down")), 1)
        self.a.daemon.wait_event(HANG, after=marks["nodea"], event="cluster_up")
        # B learns what A did meanwhile from the database, and comes to
        # hold what A holds (its throttled hog, below the threshold, is
        # no violation again: A's standing stays put).
        self.b.daemon.wait_event(HANG, after=marks["nodeb"], event="standing_received",
                                 uid=user.pw_uid, from_node="nodea")
        fields = ("level", "until", "violations", "exempt_until")

        def both():
            a, b = self.a.standing(user), self.b.standing(user)
            return a and b and all(a[f] == b[f] for f in fields) and (a, b)
        a, b = wait_for(both, HANG, "B to hold A's standing")
        self.assertEqual(a["level"], again["level_after"])
        self.assertIsNone(a["exempt_until"])
        self.assert_events_stored_once(self.a)

    def test_kill9_while_catching_up(self):
        """A's queue replayed into a database that stalls on the first
        change (a lock held by another session); A killed meanwhile, with
        part of its queue stored; A back: each record stored once."""
        user = self.users.add("lgtestcl5")
        mark = self.a.daemon.mark()
        # The nodes may not log in again until the lock is held: A's link,
        # retrying meanwhile, must not replay its queue before it.
        self.server.psql(f"ALTER ROLE {NODE} NOLOGIN")
        try:
            self.server.stop("immediate")
            try:
                self.a.daemon.wait_event(HANG, after=mark, event="cluster_down")
                for i in range(20):
                    self.a.ctl("exempt", user.pw_name, "--for", "1h", "--reason", f"round {i}")
                    self.a.ctl("exempt", user.pw_name, "--remove", "--reason", f"round {i}")
            finally:
                self.server.start()
            lock = self.server.psql_session()
            try:
                lock.stdin.write("BEGIN; LOCK TABLE loginguard.standing IN EXCLUSIVE MODE;"
                                 " SELECT 'locked';\n")
                self.assertEqual(lock.stdout.readline().strip(), "locked")
                before = self.stored_seq("nodea")
                last = self.queued_seq(self.a)
                self.server.psql(f"ALTER ROLE {NODE} LOGIN")
                moved = wait_for(lambda: self.stored_seq("nodea") > before, HANG,
                                 "A's link to store what precedes the first change")
                self.assertTrue(moved)
                self.a.kill()
                stored = self.stored_seq("nodea")
                print(f"\n  node A killed with records up to {stored} of {last} stored")
                self.assertLess(stored, last)
            finally:
                lock.stdin.close()
                lock.wait(timeout=HANG)
                lock.stdout.close()
                lock.stderr.close()
        finally:
            self.server.psql(f"ALTER ROLE {NODE} LOGIN")
        mark = self.a.daemon.mark()
        self.a.start()
        self.a.daemon.wait_event(HANG, after=mark, event="cluster_up")
        wait_for(lambda: self.stored_seq("nodea") >= last, HANG, "A to catch up")
        self.assert_events_stored_once(self.a)
        changes = self.server.psql(f"SELECT count(*), count(DISTINCT seq) FROM loginguard.changes"
                                   f" WHERE node = 'nodea' AND uid = {user.pw_uid}")
        self.assertEqual(changes.strip(), "40|40")

    def stored_seq(self, node):
        out = self.server.psql(f"SELECT stored_seq FROM loginguard.nodes WHERE node = '{node}'")
        return int(out.strip() or 0)

    def queued_seq(self, node):
        with open(os.path.join(node.workdir, "cluster-queue.jsonl")) as f:
            return json.loads(f.read().splitlines()[-1])["seq"]

    def stored_events(self, node):
        rows = self.server.psql(f"SELECT event FROM loginguard.events WHERE node = '{node.name}'")
        return Counter(event_key(json.loads(r)) for r in rows.splitlines())

    def assert_events_stored_once(self, node):
        """Every event of node's log so far is in the database, once (but
        those about rows it received: each node logs its own of those)."""
        local = Counter(event_key(e) for e in node.daemon.events()
                        if e["event"] != "standing_received")
        wait_for(lambda: local <= self.stored_events(node), HANG,
                 f"every event of {node.name} in the database")
        stored = self.stored_events(node)
        self.assertEqual({k: stored[k] for k in local}, dict(local))


if __name__ == "__main__":
    lgtest.run_tests()
