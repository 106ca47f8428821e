"""loginguardctl against a real PostgreSQL 15 server (pgserver.py): cluster
init makes the schema from nothing, again is a no-op, and two at once
make it once; --grant gives a node's role what a node needs and nothing
more (no tables of its own, no deletes); a connection that fails says so
and where, never the password, with exit status 3; and status, events
and report --cluster show what two nodes stored (rows put in by psql as
the node's role)."""

import json
import os
import subprocess
import unittest

import lgtest
import pgserver
from lgtest import wait_for
from pgserver import NODE, OWNER

CTL = os.path.join(lgtest.TOP_BUILDDIR, "tools", "loginguardctl")
TABLES = ["changes", "events", "meta", "nodes", "standing"]
INIT_LOCK = "pg_advisory_lock(hashtext('loginguard cluster init'))"


def sql_text(s):
    return "'" + s.replace("'", "''") + "'"


def event(when, name, user, uid, host, **fields):
    e = {"time": when + ".000Z", "host": host, "event": name, "user": user, "uid": uid,
         "mode": "enforce"}
    e.update(fields)
    return e


def violation(when, user, uid, host, level, until):
    p = {"pid": 4242, "comm": "python3", "exe": "/usr/bin/python3.11", "argv": ["python3"],
         "argv_bytes": 7, "argv_sha256": None, "argv_truncated": False, "cpu_cores": 3.0,
         "rss_bytes": 1 << 30, "class": "none"}
    return event(when, "violation", user, uid, host, level_before=level - 1, level_after=level,
                 level={"number": level, "name": f"level{level}", "cpu_cores": 1.0,
                        "memory_bytes": 0, "stop": False, "duration_s": 3600},
                 reason="cpu", usage={"cpu_cores": 3.5, "memory_bytes": 2 << 30,
                                      "window_s": 300.0},
                 processes=[p], until=until + ".000Z", action="limit", applied=True)


class ClusterCtl(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not pgserver.available():
            raise unittest.SkipTest("PostgreSQL 15 (postgresql-15) is not installed")
        lgtest.Fixture.of(cls)
        cls.server = pgserver.PgServer()
        cls.addClassCleanup(cls.server.teardown)
        cls.alice = cls.users.add("lgtestca")

    def tearDown(self):
        lgtest.assert_none_left(self.users.uids(), self.id())

    def ctl(self, *args, database=None, timeout=lgtest.HANG):
        """loginguardctl with a config whose [cluster] database is database
        (the owner's, by the passfile, unless given; "" for none)."""
        if database is None:
            database = self.server.conninfo(OWNER)
        conf = lgtest.write_config(os.path.join(self.workdir, "loginguard.conf"),
                                   cluster={"database": database, "node": "login1"}
                                   if database else {})
        p = subprocess.run([CTL, "--config", conf] + list(args), capture_output=True,
                           text=True, timeout=timeout, cwd="/")
        return p.returncode, p.stdout, p.stderr

    def init(self, *args, **kw):
        code, out, err = self.ctl("cluster", "init", *args, **kw)
        self.assertEqual(code, 0, err)
        return out

    def tables(self, dbname=pgserver.DATABASE):
        return self.server.psql("SELECT tablename, tableowner FROM pg_tables "
                                "WHERE schemaname = 'loginguard' ORDER BY 1",
                                dbname=dbname).split()

    # ------------------------------------------------------------ init

    def test_a_init_from_scratch(self):
        self.assertEqual(self.tables(), [])
        self.assertEqual(self.init(), "schema at version 1, was 0\n")
        self.assertEqual(self.tables(), [f"{t}|{OWNER}" for t in TABLES])
        self.assertEqual(self.server.psql("SELECT value FROM loginguard.meta "
                                          "WHERE key = 'schema_version'"), "1\n")
        self.assertEqual(self.server.psql("SELECT sequenceowner FROM pg_sequences "
                                          "WHERE schemaname = 'loginguard'"), f"{OWNER}\n")

    def test_b_init_again_changes_nothing(self):
        self.server.psql("INSERT INTO loginguard.nodes (node, stored_seq) VALUES ('kept', 7)")
        self.assertEqual(self.init(), "schema at version 1, was 1: nothing to do\n")
        self.assertEqual(self.server.psql("SELECT stored_seq FROM loginguard.nodes "
                                          "WHERE node = 'kept'"), "7\n")
        self.server.psql("DELETE FROM loginguard.nodes WHERE node = 'kept'")

    def test_c_two_inits_at_once(self):
        """Both wait on the advisory lock a session holds, then one makes
        the schema and the other finds it made."""
        self.server.psql("CREATE DATABASE lgtwo OWNER lgowner", dbname="postgres")
        holder = self.server.psql_session(dbname="lgtwo")
        procs = []
        try:
            holder.stdin.write(f"SELECT {INIT_LOCK};\n\\echo locked\n")
            holder.stdin.flush()
            self.assertEqual(holder.stdout.readline(), "\n")  # the lock function's void
            self.assertEqual(holder.stdout.readline(), "locked\n")
            conf = os.path.join(self.workdir, "two.conf")
            with open(conf, "w") as f:
                f.write(f"[cluster]\ndatabase = {self.server.conninfo(dbname='lgtwo')}\n")
            procs = [subprocess.Popen([CTL, "--config", conf, "cluster", "init"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, cwd="/") for _ in range(2)]
            wait_for(lambda: self.server.psql(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted",
                dbname="lgtwo") == "2\n", lgtest.HANG, "both inits to wait on the lock")
        finally:
            holder.stdin.close()
            holder.wait(timeout=lgtest.HANG)
            holder.stdout.close()
            holder.stderr.close()
        results = []
        for p in procs:
            out, err = p.communicate(timeout=lgtest.HANG)
            self.assertEqual(p.returncode, 0, err)
            results.append(out)
        self.assertEqual(sorted(results), ["schema at version 1, was 0\n",
                                           "schema at version 1, was 1: nothing to do\n"])
        self.assertEqual(self.tables("lgtwo"), [f"{t}|{OWNER}" for t in TABLES])
        self.assertEqual(self.server.psql("SELECT count(*) FROM loginguard.meta",
                                          dbname="lgtwo"), "1\n")

    def test_d_node_role_has_a_nodes_rights_only(self):
        self.assertEqual(self.init("--grant", NODE),
                         "schema at version 1, was 1: nothing to do\n"
                         f"granted {NODE} a node's rights\n")
        node = dict(user=NODE)
        # What a node does: its records stored, a standing made and changed.
        self.server.psql("""
BEGIN;
INSERT INTO loginguard.nodes (node) VALUES ('rights');
INSERT INTO loginguard.events VALUES ('rights', 1, now(), 'violation', 5, '{}');
INSERT INTO loginguard.changes (rev, node, seq, uid, kind, base_rev, after_seq, applied, at)
    VALUES (nextval('loginguard.rev'), 'rights', 2, 5, 'raise', 0, 0, true, now());
INSERT INTO loginguard.standing (uid, rev, level, violations, node, seq)
    VALUES (5, currval('loginguard.rev'), 1, 1, 'rights', 2);
UPDATE loginguard.standing SET level = 2 WHERE uid = 5;
UPDATE loginguard.nodes SET stored_seq = 2, last_seen = now() WHERE node = 'rights';
SELECT value FROM loginguard.meta;
SELECT uid, level FROM loginguard.standing FOR UPDATE;
LISTEN loginguard_standing;
NOTIFY loginguard_standing, '1';
ROLLBACK;
""", **node)
        refused = {
            "CREATE TABLE loginguard.mine (x int)": "permission denied for schema loginguard",
            "CREATE TABLE public.mine (x int)": "permission denied for schema public",
            "CREATE SCHEMA mine": "permission denied for database",
            "DELETE FROM loginguard.events": "permission denied for table events",
            "UPDATE loginguard.meta SET value = '9'": "permission denied for table meta",
            "DROP TABLE loginguard.standing": "must be owner",
            "TRUNCATE loginguard.changes": "permission denied for table changes",
        }
        for sql, why in refused.items():
            p = self.server.psql(sql, check=False, **node)
            self.assertNotEqual(p.returncode, 0, sql)
            self.assertIn(why, p.stderr, sql)
        # A node's role may run init on a made schema, but grants nothing.
        database = self.server.conninfo(NODE)
        self.assertEqual(self.init(database=database),
                         "schema at version 1, was 1: nothing to do\n")
        code, out, err = self.ctl("cluster", "init", "--grant", NODE, database=database)
        self.assertEqual(code, 1, err)
        self.assertIn("granting a node's rights failed on the cluster's database", err)
        self.assertIn("may not grant them; run cluster init --grant as the role that owns", err)
        self.assertIn(f"dbname=loginguard user={NODE}", err)

    # ------------------------------------------------------------ errors

    def test_e_failed_connections(self):
        wrong = "not-the-password-314"
        # A password in the config itself is refused before any connection.
        code, out, err = self.ctl("cluster", "init",
                                  database=self.server.conninfo(password=wrong))
        self.assertEqual((code, out), (2, ""), err)
        self.assertIn("loginguard.conf:2: [cluster] database must not hold a password", err)
        self.assertNotIn(wrong, err)
        # A wrong one in the passfile: the server refuses it.
        passfile = os.path.join(self.workdir, "wrong.pgpass")
        with open(passfile, "w") as f:
            os.fchmod(f.fileno(), 0o600)
            f.write(f"{self.server.dir}:5432:*:{OWNER}:{wrong}\n")
        database = self.server.conninfo().replace(self.server.passfile, passfile)
        code, out, err = self.ctl("cluster", "init", database=database)
        self.assertEqual((code, out), (3, ""), err)
        self.assertIn(f"cannot connect to the cluster's database (host={self.server.dir} "
                      f"port=5432 dbname=loginguard user={OWNER}", err)
        self.assertIn("password authentication failed", err)
        self.assertNotIn(wrong, err)
        self.assertNotIn(self.server.passwords[OWNER], err)

        code, out, err = self.ctl("status", "--cluster", database="")
        self.assertEqual(code, 2, err)
        self.assertIn(f"{self.workdir}/loginguard.conf sets no database in [cluster]", err)

        code, out, err = self.ctl("events", "--cluster", database=f"password {wrong}")
        self.assertEqual(code, 2, err)
        self.assertIn("is not a libpq connection string", err)
        self.assertNotIn(wrong, err)

        self.server.stop("immediate")
        try:
            for cmd in (["cluster", "init"], ["status", "--cluster"], ["events", "--cluster"],
                        ["report", "--cluster"]):
                code, out, err = self.ctl(*cmd, database=self.server.conninfo())
                self.assertEqual(code, 3, f"{cmd}: {err}")
                self.assertIn("Is the server running", err)
                self.assertNotIn(self.server.passwords[OWNER], err)
        finally:
            self.server.start()
        self.assertEqual(self.init(), "schema at version 1, was 1: nothing to do\n")

    # ------------------------------------------------------------ reads

    def store_two_nodes(self):
        """What nodes login1 and login2 stored, as the node's role: alice
        limited (last by login2), a uid with no passwd entry exempt (by
        login1), a user whose limits are over (no row shown); events of
        both nodes, inserted out of time order."""
        u, ghost = self.alice.pw_uid, lgtest.TEST_UID_MIN + 99990
        self.server.psql("DELETE FROM loginguard.events; DELETE FROM loginguard.standing; "
                         "DELETE FROM loginguard.nodes")
        far = 4102444800 * 10**6  # 2100-01-01
        events = [
            ("login2", 1, violation("2026-11-25T10:05:00", "lgtestca", u, "login2", 2,
                                    "2026-11-25T11:05:00")),
            ("login1", 1, violation("2026-11-25T10:00:00", "lgtestca", u, "login1", 1,
                                    "2026-11-25T10:15:00")),
            ("login1", 2, event("2026-11-25T10:30:00", "exempt_added", None, ghost, "login1",
                                by="root", reason="a course", until="2100-01-01T00:00:00.000Z")),
            ("login2", 2, event("2026-11-25T12:00:00", "level_expired", "lgtestca", u, "login2",
                                level_before=2, level_after=2, action="release")),
        ]
        rows = ",\n".join(f"({sql_text(n)}, {s}, {sql_text(e['time'])}, {sql_text(e['event'])}, "
                          f"{e['uid']}, {sql_text(json.dumps(e))})" for n, s, e in events)
        self.server.psql(f"""
INSERT INTO loginguard.nodes (node, stored_seq) VALUES ('login1', 2), ('login2', 2);
INSERT INTO loginguard.events (node, seq, at, name, uid, event) VALUES
{rows};
INSERT INTO loginguard.standing (uid, rev, level, since, until, violations, exempt_until,
                                 node, seq)
VALUES ({u}, nextval('loginguard.rev'), 2, 1, {far}, 3, 0, 'login2', 1),
       ({ghost}, nextval('loginguard.rev'), 0, 0, 0, 0, {far}, 'login1', 2),
       ({ghost + 1}, nextval('loginguard.rev'), 0, 0, 0, 4, 5, 'login1', 3);
""", user=NODE)
        return u, ghost

    def test_f_status_cluster(self):
        u, ghost = self.store_two_nodes()
        code, out, err = self.ctl("status", "--cluster")
        self.assertEqual(code, 0, err)
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith(f"cluster: users limited or exempt on any node, "
                                            f"from host={self.server.dir}"), out)
        self.assertEqual(lines[2].split(), ["USER", "UID", "LEVEL", "UNTIL", "VIOLATIONS",
                                            "EXEMPT", "UNTIL", "NODE"])
        self.assertEqual(len(lines), 5, out)
        self.assertEqual(lines[3].split(), ["lgtestca", str(u), "2", "throttled", "2100-01-01",
                                            "00:00:00Z", "3", "-", "login2"])
        self.assertEqual(lines[4].split(), ["-", str(ghost), "none", "-", "0", "2100-01-01",
                                            "00:00:00Z", "login1"])
        code, out, err = self.ctl("--json", "status", "--cluster")
        self.assertEqual(code, 0, err)
        users = json.loads(out)["users"]
        self.assertEqual([(x["uid"], x["user"], x["level"], x["node"]) for x in users],
                         [(u, "lgtestca", 2, "login2"), (ghost, None, 0, "login1")])
        self.assertEqual(users[1]["exempt_until"], "2100-01-01T00:00:00.000Z")

    def test_g_events_cluster(self):
        u, ghost = self.store_two_nodes()
        code, out, err = self.ctl("--json", "events", "--cluster")
        self.assertEqual(code, 0, err)
        got = [json.loads(line) for line in out.splitlines()]
        self.assertEqual([(e["node"], e["event"], e["time"]) for e in got], [
            ("login1", "violation", "2026-11-25T10:00:00.000Z"),
            ("login2", "violation", "2026-11-25T10:05:00.000Z"),
            ("login1", "exempt_added", "2026-11-25T10:30:00.000Z"),
            ("login2", "level_expired", "2026-11-25T12:00:00.000Z"),
        ])
        code, out, err = self.ctl("events", "--cluster", "--user", "lgtestca",
                                  "--kind", "violation")
        self.assertEqual(code, 0, err)
        lines = out.splitlines()
        self.assertEqual(lines[0].split()[:3], ["NODE", "TIME", "USER"])
        self.assertEqual([line.split()[0] for line in lines[1:]], ["login1", "login2"])
        self.assertTrue(all("lgtestca" in line and "violation" in line for line in lines[1:]))
        # The same rows as events prints of a log, after the node.
        code, local, err = self.local_events(got[:2])
        self.assertEqual(code, 0, err)
        self.assertEqual([line[18:] for line in lines], local.splitlines())
        code, out, err = self.ctl("events", "--cluster", "--since", "2026-11-25T11:00Z")
        self.assertEqual(code, 0, err)
        self.assertEqual([line.split()[0] for line in out.splitlines()[1:]], ["login2"])
        self.assertIn("level_expired", out)
        code, out, err = self.ctl("events", "--cluster", "--follow")
        self.assertEqual(code, 2, err)

    def local_events(self, events):
        """loginguardctl events over a log of these events (the node taken out)."""
        log = os.path.join(self.workdir, "events.jsonl")
        with open(log, "w") as f:
            for e in events:
                e = dict(e)
                del e["node"]
                f.write(json.dumps(e) + "\n")
        conf = lgtest.write_config(os.path.join(self.workdir, "local.conf"),
                                   daemon={"event_log": log})
        p = subprocess.run([CTL, "--config", conf, "events", "--user", "lgtestca",
                            "--kind", "violation"], capture_output=True, text=True,
                           timeout=lgtest.HANG)
        return p.returncode, p.stdout, p.stderr

    def test_h_report_cluster(self):
        u, ghost = self.store_two_nodes()
        code, out, err = self.ctl("report", "--cluster", "--since", "2026-11-25T00:00Z",
                                  "--until", "2026-11-26T00:00Z", "--format", "json")
        self.assertEqual(code, 0, err)
        r = json.loads(out)
        self.assertEqual(r["events"], 4, out)
        alice = [x for x in r["users"] if x["uid"] == u]
        self.assertEqual(len(alice), 1, out)
        self.assertEqual(alice[0]["violations"], 2, out)
        code, text, err = self.ctl("report", "--cluster", "--since", "2026-11-25T00:00Z",
                                   "--until", "2026-11-26T00:00Z")
        self.assertEqual(code, 0, err)
        self.assertIn("lgtestca", text)


if __name__ == "__main__":
    lgtest.run_tests()
