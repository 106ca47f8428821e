"""A node of a cluster whose database cannot be reached, for real: it
enforces on its own state as a node alone does, says so in its status,
and keeps every change of standing (a violation, a forgive, an
exemption) in its queue on disk, numbered on across a restart; a
password in [cluster] database is a config error at its line (issue 13:
the daemon's side; the link itself is tested with a database).  The
daemon loads no database client, the link program refuses to run as
root, and a link_user that is root starts no link (issue 19)."""

import json
import os
import subprocess

import lgtest

SAMPLE = 0.5
WINDOW = 2.0
CPU = 0.5               # cores, the violation threshold (spin 2 gets twice that on a busy node)
THROTTLE = 0.25         # cores, level 1
HANG = lgtest.HANG
FLAG_TIMEOUT = WINDOW + HANG
NODE = "lgtest-node.1"
# No server listens there: the link (once merged) says down and retries.
DATABASE = "host=/nonexistent-lgtest dbname=loginguard connect_timeout=1"
CTL = os.path.join(lgtest.TOP_BUILDDIR, "tools", "loginguardctl")


class ClusterAlone(lgtest.DaemonTestCase):
    @classmethod
    def policy(cls):
        return lgtest.policy(lgtest.enforcing(cls.parent, cls.workdir,
                                              sample_interval=f"{SAMPLE:g}s"),
                             **lgtest.throttle_policy(CPU, WINDOW, THROTTLE),
                             cluster={"database": DATABASE, "node": NODE,
                                      "link_user": lgtest.LINK_USER})

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        lgtest.favour_cpu(cls.parent)

    @classmethod
    def make_daemon(cls):
        # Started again by a test: a hang guard, not a figure.
        return lgtest.Daemon(cls.workdir, cls.policy(), start_timeout=HANG)

    @classmethod
    def prepare(cls):
        cls.users.add_link_user()
        cls.ctl_bin = lgtest.private_copy(CTL, cls.workdir, "loginguardctl")

    # (test_control's two helpers, here so that this module stands alone.)
    def ctl(self, *args):
        """loginguardctl as root on the daemon's socket: (exit status, stdout, stderr)."""
        p = subprocess.run([self.ctl_bin, "--socket", f"{self.workdir}/control.sock"]
                           + list(args), capture_output=True, text=True, timeout=HANG, cwd="/")
        return p.returncode, p.stdout, p.stderr

    def ctl_json(self, *args):
        code, out, err = self.ctl("--json", *args)
        self.assertEqual(code, 0, err)
        return json.loads(out)

    def records(self):
        with open(os.path.join(self.workdir, "cluster-queue.jsonl")) as f:
            return [json.loads(line) for line in f if line.strip()]

    def changes(self, uid, kind=None):
        return [r for r in self.records() if r["kind"] != "event" and r["uid"] == uid
                and kind in (None, r["kind"])]

    def test_enforces_alone_and_queues_every_change(self):
        status = self.ctl_json("status")
        self.assertEqual(status["cluster"]["node"], NODE)
        self.assertIn(status["cluster"]["link"], ("down", "off"))
        code, out, err = self.ctl("status")
        self.assertEqual(code, 0, err)
        self.assertIn(f"cluster: node {NODE}, link ", out)

        user = self.users.add("lgtestcl1")
        self.procs.start([self.spin, "2"], user)
        self.assert_full_window(self.daemon.wait_event(FLAG_TIMEOUT, event="violation",
                                                       uid=user.pw_uid), WINDOW, CPU)
        # The record is on disk before the event is written (and the
        # event before the limits are set).
        self.daemon.wait_event(HANG, event="limits_set", uid=user.pw_uid, level=1)
        raise_ = self.changes(user.pw_uid)[0]
        self.assertEqual(raise_["t"], "record")
        self.assertEqual(raise_["kind"], "raise")
        self.assertEqual((raise_["base_rev"], raise_["after_seq"]), (0, 0))
        self.assertEqual(raise_["penalty"]["level"], 1)
        self.assertEqual(raise_["penalty"]["last_reason"], "cpu")
        self.assertIsNone(raise_["by"])
        # The event of it too, with the node's name.
        events = [r["event"] for r in self.records() if r["kind"] == "event"]
        violation = [e for e in events if e["event"] == "violation"][0]
        self.assertEqual(violation["node"], NODE)

        code, out, err = self.ctl("forgive", "lgtestcl1", "--reason", "test")
        self.assertEqual(code, 0, err)
        # On disk before the reply.  (The hog, free again, may be a
        # violation again after a window: a raise of its own.)
        forgive = self.changes(user.pw_uid, "forgive")[-1]
        self.assertEqual(forgive["by"], "root")
        self.assertEqual(forgive["penalty"]["level"], 0)
        # Its own raise is still on its way: the forgive follows it.
        self.assertEqual(forgive["after_seq"], raise_["seq"])

        code, out, err = self.ctl("exempt", "lgtestcl1", "--for", "1h", "--reason", "test")
        self.assertEqual(code, 0, err)
        exempt = self.changes(user.pw_uid, "exempt")[-1]
        self.assertGreater(exempt["exempt_until"], 0)
        self.assertGreaterEqual(self.ctl_json("status")["cluster"]["queued"], 3)
        mode = os.lstat(os.path.join(self.workdir, "cluster-queue.jsonl")).st_mode
        self.assertEqual(mode & 0o7777, 0o600)

        # A restart loses nothing and numbers on.
        last = self.records()[-1]["seq"]
        self.daemon.stop(timeout=HANG)
        self.daemon.start()
        records = self.records()
        self.assertIn(exempt, records)
        self.assertGreater(records[-1]["seq"], last)
        seqs = [r["seq"] for r in records]
        self.assertEqual(seqs, sorted(set(seqs)))

    def test_the_daemon_loads_no_database_client(self):
        """Issue 19: the root daemon parses hostile input; only the link
        program, run unprivileged, loads libpq and what stands behind it."""
        libs = subprocess.run(["ldd", lgtest.DAEMON], capture_output=True, text=True,
                              check=True, timeout=HANG).stdout
        for name in ("libpq", "libssl", "libcrypto", "libkrb5", "libgssapi", "libldap"):
            self.assertNotIn(name, libs)
        link = subprocess.run(["ldd", lgtest.LINK_PROGRAM], capture_output=True, text=True,
                              check=True, timeout=HANG).stdout
        self.assertIn("libpq", link)
        # Nor does the link run as root, whoever starts it.
        p = subprocess.run([lgtest.LINK_PROGRAM], capture_output=True, text=True, timeout=HANG)
        self.assertEqual(p.returncode, 2)
        self.assertIn("does not run as root", p.stderr)

    def test_a_root_link_user_is_refused(self):
        fixture = lgtest.Fixture("rootlink", users=False)
        self.addCleanup(fixture.close)
        workdir = fixture.workdir
        lgtest.write_rules(workdir, [])
        daemon = lgtest.Daemon(workdir, lgtest.policy(
            lgtest.observing(None, workdir, sample_interval=None, scan_interval=None),
            cluster={"database": DATABASE, "node": NODE, "link_user": "root"}))
        daemon.start()
        self.addCleanup(daemon.stop)
        e = daemon.wait_event(HANG, event="cluster_link_error")
        self.assertIn('"root" ([cluster] link_user) is root', e["message"])
        self.assertEqual(subprocess.run(["pgrep", "-P", str(daemon.proc.pid), "-x",
                                         "loginguard-link"], capture_output=True).returncode, 1)

    def test_a_password_is_a_config_error_at_its_line(self):
        conf = os.path.join(self.workdir, "password.conf")
        with open(conf, "w") as f:
            f.write("[cluster]\n# the database\ndatabase = host=db password=secret\n")
        p = subprocess.run([self.ctl_bin, "check-config", conf],
                           capture_output=True, text=True, timeout=HANG)
        self.assertEqual(p.returncode, 1)
        self.assertIn(f"{conf}:3: [cluster] database must not hold a password", p.stderr)
        self.assertIn("passfile=", p.stderr)


if __name__ == "__main__":
    lgtest.run_tests()
