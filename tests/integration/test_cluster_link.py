"""The cluster link alone (link/, started by daemon/cluster/cluster_link.c) against a real
PostgreSQL 15 server (pgserver.py), driven through tests/helpers/
lg-cluster-link, which starts it as the daemon does and relays its packets
as JSON lines: "up" with what the database holds of the node, a raise
stored and echoed as the user's standing, another node's change delivered
on NOTIFY (every one of a burst), a record sent again after a reconnect
stored once, the server crashing ("down", with no password in the error)
and coming back ("up" again with the right stored), a server that stops
answering given up after one statement's wait, a forgive and an
exemption through the link, a schema of another version refused with the
command that fixes it (issue 13).  Every wait is a hang guard; how soon a
change reaches another node, a crash is seen and a server found again is
what `make bench` prints."""

import json
import os
import pwd
import queue
import signal
import subprocess
import threading
import time
import unittest

import lgtest
import pgserver

HELPER = os.path.join(lgtest.TOP_BUILDDIR, "tests", "helpers", "lg-cluster-link")
CTL = os.path.join(lgtest.TOP_BUILDDIR, "tools", "loginguardctl")
UID = lgtest.TEST_UID_MIN + 701
HANG = lgtest.HANG
# The link gives up on a statement after 15 s (LINK_DB_WAIT_SEC), and
# tries again at most 30 s apart (RETRY_MAX_MS): the guards cover them.
HUNG_GUARD = 15 + HANG
UP_GUARD = 30 + HANG


def penalty(level, since, until):
    return {"level": level, "since": since, "until": until, "quiet_since": since,
            "last_violation": since, "violations": level, "last_reason": "cpu",
            "last_cpu": 2.5, "last_memory": 1 << 30, "last_window": 60000000}


def record(seq, uid, kind="raise", base_rev=0, level=1, after_seq=0):
    now = int(time.time() * 1e6)
    return {"t": "record", "seq": seq, "kind": kind, "uid": uid, "base_rev": base_rev,
            "after_seq": after_seq, "at": now, "by": None,
            "penalty": penalty(level, now, now + 600000000), "exempt_until": 0}


class Link:
    """One link process under the helper; its packets in a queue."""

    def __init__(self, database, node):
        env = dict(os.environ, LG_CLUSTER_DATABASE=database, LG_CLUSTER_LINK_USER=lgtest.LINK_USER)
        self.p = subprocess.Popen([HELPER, node], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env, text=True, bufsize=1)
        self.packets = queue.Queue()
        self.seen = []
        threading.Thread(target=self._read, daemon=True).start()
        self.pid = self.expect("started", HANG)["pid"]

    def _read(self):
        for line in self.p.stdout:
            self.packets.put(json.loads(line))
        self.packets.put(None)

    def send(self, obj):
        self.p.stdin.write(json.dumps(obj) + "\n")
        self.p.stdin.flush()

    def expect(self, t, timeout, **match):
        """The next packet of type t with the fields in match (others
        passed over are kept in self.seen)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            try:
                pkt = self.packets.get(timeout=max(left, 0.01))
            except queue.Empty:
                pkt = "timeout"
            if pkt == "timeout" or (pkt is None) or left <= 0:
                raise AssertionError(f"no {t} {match} within {timeout}s; seen: {self.seen[-10:]}"
                                     f"; stderr: {self.stderr() if pkt is None else ''}")
            self.seen.append(pkt)
            if pkt.get("t") == t and all(pkt.get(k) == v for k, v in match.items()):
                return pkt

    def close(self):
        """End of stdin: the helper closes its end, the link must exit 0
        (and a sanitizer build must have found nothing on the way)."""
        if self.p.poll() is None:
            self.p.stdin.close()
            status = self.expect("exit", HANG)["status"]
            self.p.wait(HANG)
            err = self.p.stderr.read()
            for mark in ("Sanitizer", "runtime error"):
                if mark in err:
                    raise AssertionError(f"the link's stderr: {err}")
            return status
        return None

    def stderr(self):
        try:
            self.p.wait(HANG)
        except subprocess.TimeoutExpired:
            return ""
        return self.p.stderr.read()

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


class ClusterLink(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not pgserver.available():
            raise unittest.SkipTest("no PostgreSQL 15 server binaries or no postgres user")
        lgtest.Fixture.of(cls)
        cls.users.add_link_user()
        cls.server = pgserver.PgServer()
        conf = lgtest.write_config(os.path.join(cls.workdir, "loginguard.conf"),
                                   cluster={"database": cls.server.conninfo(pgserver.OWNER)})
        p = subprocess.run([CTL, "--config", conf, "cluster", "init", "--grant", pgserver.NODE],
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            cls.server.teardown()
            raise AssertionError(f"cluster init failed: {p.stdout}{p.stderr}")
        cls.node_db = cls.server.conninfo(pgserver.NODE)
        cls.links = []

    @classmethod
    def tearDownClass(cls):
        for link in cls.links:
            link.kill()
        cls.server.teardown()

    def link(self, node, database=None):
        link = Link(database or self.node_db, node)
        self.links.append(link)
        return link

    def sql(self, statement):
        return self.server.psql(statement).strip()

    def test_raise_stored_and_echoed(self):
        a = self.link("lgtest-raise")
        self.assertEqual(a.expect("up", HANG)["stored"], 0)
        a.send(record(1, UID))
        a.expect("stored", HANG, seq=1)
        row = a.expect("standing", HANG, uid=UID)
        self.assertEqual((row["node"], row["seq"], row["penalty"]["level"]),
                         ("lgtest-raise", 1, 1))
        self.assertGreater(row["rev"], 0)
        self.assertEqual(self.sql("SELECT stored_seq FROM loginguard.nodes "
                                  "WHERE node = 'lgtest-raise'"), "1")
        self.assertEqual(self.sql(f"SELECT level, rev FROM loginguard.standing WHERE uid = {UID}"),
                         f"1|{row['rev']}")
        self.assertEqual(self.sql("SELECT kind, applied, base_rev FROM loginguard.changes "
                                  "WHERE node = 'lgtest-raise'"), "raise|t|0")
        # An event shares the node's numbering.
        a.send({"t": "record", "seq": 2, "kind": "event",
                "event": {"time": "2026-11-26T22:00:00.000Z", "event": "violation",
                          "uid": UID, "level_after": 1}})
        a.expect("stored", HANG, seq=2)
        self.assertEqual(self.sql("SELECT name, uid, event->>'level_after' FROM loginguard.events "
                                  "WHERE node = 'lgtest-raise'"), f"violation|{UID}|1")
        # A stale lower (base 0 against the row's rev) is stored but dropped.
        low = record(3, UID, kind="lower", level=0)
        a.send(low)
        a.expect("stored", HANG, seq=3)
        self.assertEqual(self.sql("SELECT applied FROM loginguard.changes "
                                  "WHERE node = 'lgtest-raise' AND seq = 3"), "f")
        # A record that is not one is skipped, not waited on for ever.
        a.send({"t": "record", "seq": 4, "kind": "bogus", "uid": UID})
        a.expect("stored", HANG, seq=4)
        a.send(record(5, UID, base_rev=row["rev"], level=2))
        a.expect("stored", HANG, seq=5)
        self.assertEqual(self.sql("SELECT string_agg(seq::text, ',' ORDER BY seq) "
                                  "FROM loginguard.changes WHERE node = 'lgtest-raise'"), "1,3,5")
        self.assertEqual(a.close(), 0)

    def test_runs_as_its_own_user_with_nothing_of_roots(self):
        """Issue 19: the link (libpq, TLS, Kerberos, LDAP behind it) runs as
        link_user, with no other group, no capability and no way to gain
        one, and holds no descriptor of its starter's but its socket: it
        reached the database with the root-only password file only
        through the descriptor it was handed."""
        a = self.link("lgtest-user")
        a.expect("up", HANG)
        link = pwd.getpwnam(lgtest.LINK_USER)
        with open(f"/proc/{a.pid}/status") as f:
            status = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
        self.assertEqual(status["Uid"].split(), [str(link.pw_uid)] * 4)
        self.assertEqual(status["Gid"].split(), [str(link.pw_gid)] * 4)
        self.assertEqual(status.get("Groups", "").strip(), "")
        self.assertEqual(int(status["CapEff"], 16), 0)
        self.assertEqual(int(status["CapPrm"], 16), 0)
        self.assertEqual(status["NoNewPrivs"].strip(), "1")
        self.assertEqual(os.readlink(f"/proc/{a.pid}/exe"), os.path.realpath(lgtest.LINK_PROGRAM))
        st = os.stat(self.server.passfile)
        self.assertEqual((st.st_uid, st.st_mode & 0o777), (0, 0o600))
        fds = [os.readlink(f"/proc/{a.pid}/fd/{n}") for n in os.listdir(f"/proc/{a.pid}/fd")]
        self.assertNotIn(self.server.passfile, fds)
        self.assertEqual(a.close(), 0)

    def test_notify_from_another_node(self):
        a = self.link("lgtest-na")
        b = self.link("lgtest-nb")
        a.expect("up", HANG)
        b.expect("up", HANG)
        uid = UID + 1
        a.send(record(1, uid, level=2))
        a.expect("stored", HANG, seq=1)
        row = b.expect("standing", HANG, uid=uid)
        self.assertEqual((row["node"], row["penalty"]["level"]), ("lgtest-na", 2))
        # b raises from the row it has: current, taken.
        b.send(record(1, uid, base_rev=row["rev"], level=3))
        b.expect("stored", HANG, seq=1)
        got = a.expect("standing", HANG, uid=uid, node="lgtest-nb")
        self.assertEqual(got["penalty"]["level"], 3)
        # A new link sees every row at its "up".
        c = self.link("lgtest-nc")
        c.expect("up", HANG)
        self.assertEqual(c.expect("standing", HANG, uid=uid)["rev"], got["rev"])
        for link in (a, b, c):
            self.assertEqual(link.close(), 0)

    def test_burst_reaches_every_link(self):
        """What a link's own queries read into libpq's queue (the
        notifications that came meanwhile) is not left there: after eight
        nodes' bursts of changes, each link has every one of them, the
        last ones too (before the fix, half the runs here left one out)."""
        NODES = 8
        links = [self.link(f"lgtest-burst{n}") for n in range(NODES)]
        for link in links:
            link.expect("up", HANG)
        per_link = 200
        uids = {n: [UID + 1000 + n * per_link + i for i in range(per_link)] for n in range(NODES)}
        for start in range(0, per_link, 16):  # the helper takes 16 at a time
            for n, link in enumerate(links):
                for i, uid in enumerate(uids[n][start:start + 16]):
                    link.send(record(start + i + 1, uid))
            for link in links:
                link.expect("stored", HANG, seq=min(start + 16, per_link))
        everyone = {uid for batch in uids.values() for uid in batch}
        for n, link in enumerate(links):
            missing = everyone - set(uids[n]) - {p["uid"] for p in link.seen
                                                 if p.get("t") == "standing"}
            try:
                # An idle link that left the last ones in libpq's queue
                # never learns of them: the guard ends the wait.
                while missing:
                    missing.discard(link.expect("standing", HANG)["uid"])
            except AssertionError:
                self.fail(f"{len(missing)} of the other nodes' {len(everyone) - per_link} "
                          f"changes never reached lgtest-burst{n}")
        for link in links:
            self.assertEqual(link.close(), 0)

    def test_forgive_and_exempt(self):
        a = self.link("lgtest-fa")
        b = self.link("lgtest-fb")
        a.expect("up", HANG)
        b.expect("up", HANG)
        uid = UID + 4
        a.send(record(1, uid, level=1))
        r1 = a.expect("standing", HANG, uid=uid, seq=1)["rev"]
        # b raises from r1 and, before hearing back, its admin forgives
        # (base r1): b's own raise is cancelled; a's raise stored after r1,
        # which b's admin could not have seen, stands.
        b.send(record(1, uid, base_rev=r1, level=2))
        b.expect("stored", HANG, seq=1)
        a.send(record(2, uid, base_rev=r1, level=3))
        a.expect("stored", HANG, seq=2)
        forgive = record(2, uid, kind="forgive", base_rev=r1, level=0, after_seq=1)
        forgive["by"] = "admin"
        b.send(forgive)
        b.expect("stored", HANG, seq=2)
        self.assertEqual(self.sql(f"SELECT level, node, seq FROM loginguard.standing "
                                  f"WHERE uid = {uid}"), "3|lgtest-fa|2")
        self.assertEqual(self.sql("SELECT by_name FROM loginguard.changes "
                                  "WHERE node = 'lgtest-fb' AND seq = 2"), "admin")
        # A forgive from the newest row: level none.
        rev = int(self.sql(f"SELECT rev FROM loginguard.standing WHERE uid = {uid}"))
        b.send(record(3, uid, kind="forgive", base_rev=rev, level=0))
        b.expect("stored", HANG, seq=3)
        row = a.expect("standing", HANG, uid=uid, node="lgtest-fb", seq=3)
        self.assertEqual(row["penalty"]["level"], 0)
        # An exemption: the penalty untouched, exempt_until shared.
        until = int(time.time() * 1e6) + 3600000000
        exempt = {"t": "record", "seq": 3, "kind": "exempt", "uid": uid, "base_rev": 0,
                  "after_seq": 0, "at": int(time.time() * 1e6), "by": "admin",
                  "exempt_until": until}
        a.send(exempt)
        a.expect("stored", HANG, seq=3)
        row = b.expect("standing", HANG, uid=uid, node="lgtest-fa", seq=3)
        self.assertEqual((row["exempt_until"], row["penalty"]["level"]), (until, 0))
        for link in (a, b):
            self.assertEqual(link.close(), 0)

    def test_resent_after_reconnect_stored_once(self):
        node = "lgtest-resend"
        a = self.link(node)
        a.expect("up", HANG)
        a.send(record(1, UID + 2))
        a.expect("stored", HANG, seq=1)
        self.assertEqual(a.close(), 0)
        # A daemon that never saw "stored" sends it again to the next link.
        b = self.link(node)
        self.assertEqual(b.expect("up", HANG)["stored"], 1)
        b.send(record(1, UID + 2, level=3))
        b.expect("stored", HANG, seq=1)
        b.send(record(2, UID + 2, level=2))
        b.expect("stored", HANG, seq=2)
        self.assertEqual(self.sql(f"SELECT count(*) FROM loginguard.changes WHERE node = '{node}'"),
                         "2")
        self.assertEqual(self.sql(f"SELECT stored_seq FROM loginguard.nodes WHERE node = '{node}'"),
                         "2")
        self.assertEqual(self.sql(f"SELECT level FROM loginguard.standing WHERE uid = {UID + 2}"),
                         "2")
        self.assertEqual(b.close(), 0)

    def test_server_crash_down_and_up(self):
        node = "lgtest-crash"
        # The password in the string itself: it must never be in an error.
        database = self.server.conninfo(pgserver.NODE, password="inline")
        secret = self.server.passwords[pgserver.NODE]
        a = self.link(node, database)
        a.expect("up", HANG)
        a.send(record(1, UID + 3))
        a.expect("stored", HANG, seq=1)
        self.server.stop("immediate")
        try:
            down = a.expect("down", HANG)
            self.assertNotIn(secret, down["error"])
            # Records while down are dropped; the daemon sends them after "up".
            a.send(record(2, UID + 3))
        finally:
            self.server.start()
        up = a.expect("up", UP_GUARD)
        # Stored means committed and flushed: a crash right after loses nothing.
        self.assertEqual(up["stored"], 1)
        self.assertEqual(self.sql(f"SELECT stored_seq FROM loginguard.nodes WHERE node = '{node}'"),
                         "1")
        a.send(record(2, UID + 3, level=2))
        a.expect("stored", HANG, seq=2)
        self.assertEqual(self.sql(f"SELECT stored_seq FROM loginguard.nodes WHERE node = '{node}'"),
                         "2")
        for pkt in a.seen:
            self.assertNotIn(secret, json.dumps(pkt))
        self.assertEqual(a.close(), 0)

    def test_hung_server(self):
        """A server that stops answering (its backend stopped) costs the
        link one statement's wait (15 s), then it is "down" and tries
        again; nothing blocks for ever."""
        a = self.link("lgtest-hung")
        a.expect("up", HANG)

        def backends():
            out = self.sql("SELECT pid FROM pg_stat_activity WHERE application_name = "
                           "'loginguardd'")
            return out.split() if out else []
        pids = lgtest.wait_for(lambda: len(backends()) == 1 and backends(), HANG,
                               "the link's one backend")
        pid = int(pids[0])
        os.kill(pid, signal.SIGSTOP)
        try:
            a.send(record(1, UID + 5))
            down = a.expect("down", HUNG_GUARD)
            # The link's own clock: it says this only once its whole
            # statement's wait has run out with the server still connected.
            self.assertIn("did not answer within 15 s", down["error"])
        finally:
            os.kill(pid, signal.SIGCONT)
        self.assertEqual(a.expect("up", UP_GUARD)["stored"], 0)
        a.send(record(1, UID + 5))
        a.expect("stored", HANG, seq=1)
        self.assertEqual(a.close(), 0)

    def test_wrong_password_and_schema_version(self):
        wrong = "wrong-secret-5150"
        a = self.link("lgtest-wrong", self.server.conninfo(pgserver.NODE, password=wrong))
        down = a.expect("down", HANG)
        self.assertNotIn(wrong, down["error"])
        self.assertIn("cannot connect to the cluster's database", down["error"])
        self.assertEqual(a.close(), 0)
        self.sql("UPDATE loginguard.meta SET value = '2' WHERE key = 'schema_version'")
        try:
            b = self.link("lgtest-version")
            down = b.expect("down", HANG)
            self.assertIn("loginguardctl cluster init", down["error"])
            self.assertIn("version 2", down["error"])
        finally:
            self.sql("UPDATE loginguard.meta SET value = '1' WHERE key = 'schema_version'")
        # Put right, a retry finds it.
        b.expect("up", UP_GUARD)
        self.assertEqual(b.close(), 0)
        c = self.link("n" * 64)
        self.assertIn("node in [cluster]", c.expect("down", HANG)["error"])
        self.assertEqual(c.close(), 0)


if __name__ == "__main__":
    lgtest.run_tests()
