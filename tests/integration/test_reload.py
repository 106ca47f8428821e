"""loginguardctl reload and check-config, for real: a reload with a broken
rules file prints each error with its file and line, exits 1 and leaves
the running policy in force (its rule still stops a program); once the
file is fixed a reload says what changed and the new rule acts; a user
who is no admin is refused; check-config judges files without a daemon
(issue: the control plane)."""

import json
import os
import subprocess

import lgtest
import test_control

SAMPLE = 0.5
HANG = lgtest.HANG
OLD_RULE = {"name": "test-old", "class": "forbidden", "comm": "lgold"}
NEW_RULE = {"name": "test-new", "class": "forbidden", "comm": "lgnew"}


class Reload(test_control.ControlCase):
    @classmethod
    def policy(cls):
        return lgtest.policy(lgtest.enforcing(cls.parent, cls.workdir,
                                              admin_group=test_control.ADMIN_GROUP,
                                              sample_interval=f"{SAMPLE:g}s"),
                             violation=lgtest.violation(2, memory=None, memory_pressure=None))

    @classmethod
    def daemon_rules(cls):
        return [OLD_RULE]

    def rules_path(self):
        return f"{self.workdir}/rules.d/test.rules"

    def check_config(self, *args):
        """loginguardctl check-config, no daemon asked: (status, stdout, stderr)."""
        p = subprocess.run([self.ctl_bin, "check-config"] + list(args), capture_output=True,
                           text=True, timeout=HANG)
        return p.returncode, p.stdout, p.stderr

    def assert_stopped(self, name):
        """A test user's program called name is stopped by a forbidden rule."""
        user = self.users.add("lgtest" + name[2:])
        program = lgtest.private_copy(lgtest.SPIN, self.workdir, name)
        mark = self.daemon.mark()
        proc = self.procs.start([program, "1", "0.1"], user)
        stopping = self.daemon.wait_event(HANG, after=mark, event="process_stopping",
                                          uid=user.pw_uid)
        self.assertEqual(stopping["process"]["pid"], proc.pid)
        proc.wait(HANG)

    def violation_cpu(self):
        return self.ctl_json("status")["policy"]["violation_cpu_cores"]

    def test_a_broken_reload_keeps_the_policy_and_a_fixed_one_takes(self):
        # Broken: a valid drop-in change and a rules file with an error on
        # line 2 (an unknown class).
        self.daemon.write_dropin("50-reload.conf", lgtest.policy(
            violation=lgtest.violation(3, memory=None, memory_pressure=None)))
        with open(self.rules_path(), "w") as f:
            f.write(json.dumps(OLD_RULE) + "\n" +
                    json.dumps(dict(NEW_RULE, **{"class": "forbiden"})) + "\n")
        mark = self.daemon.mark()
        code, out, err = self.ctl("reload")
        self.assertEqual(code, 1, out + err)
        self.assertIn(f"{self.rules_path()}:2: ", err)
        self.assertIn("invalid_config", err)
        self.assertIn("the running policy stays", err)
        # The errors are those check-config prints, line for line.
        check_code, _, check_err = self.check_config(self.daemon.conf)
        self.assertEqual(check_code, 1)
        self.assertEqual(err.splitlines()[:-1], check_err.splitlines()[:-1])
        event = self.daemon.wait_event(HANG, after=mark, event="config_error")
        self.assertEqual((event["by_uid"], event["request"]), (0, "reload"))
        self.assertEqual(event["error_count"], len(err.splitlines()) - 1)
        self.assertFalse(self.daemon.find(mark, event="config_reloaded"))
        # The old policy stays: its numbers, and its rule still acts.
        self.assertEqual(self.violation_cpu(), 2.0)
        self.assert_stopped("lgold")

        # Fixed: the reload takes and says what changed.
        with open(self.rules_path(), "w") as f:
            f.write(json.dumps(OLD_RULE) + "\n" + json.dumps(NEW_RULE) + "\n")
        mark = self.daemon.mark()
        code, out, err = self.ctl("reload")
        self.assertEqual(code, 0, err)
        self.assertIn("reloaded: enforce mode, 2 rules (was 1)", out)
        self.assertIn("[violation] cpu", out)
        self.assertIn(f"rules changed in {self.rules_path()}", out)
        event = self.daemon.wait_event(HANG, after=mark, event="config_reloaded")
        self.assertEqual((event["by_uid"], event["by"]), (0, "root"))
        self.assertEqual(self.violation_cpu(), 3.0)
        self.assert_stopped("lgnew")
        # --json: the same, for scripts; nothing changed since.
        reply = self.ctl_json("reload")
        self.assertEqual((reply["mode"], reply["rules"]), ("enforce", 2))
        self.assertEqual((reply["changed"], reply["rule_files_changed"]), ([], []))
        self.assertIn("nothing changed", reply["summary"])

    def test_only_root_and_admin_group_may_reload(self):
        user = self.users.add("lgtest7")
        mark = self.daemon.mark()
        code, out, err = self.ctl("reload", user=user)
        self.assertEqual(code, 1, out + err)
        self.assertIn(f"reload needs root or membership of the group {test_control.ADMIN_GROUP}",
                      err)
        event = self.daemon.wait_event(HANG, after=mark, event="control_refused", uid=user.pw_uid)
        self.assertEqual((event["by_uid"], event["request"]), (user.pw_uid, "reload"))
        self.assertFalse(self.daemon.find(mark, event="config_reloaded"))
        admin = self.users.add(test_control.ADMIN_GROUP)
        mark = self.daemon.mark()
        code, out, err = self.ctl("reload", user=admin)
        self.assertEqual(code, 0, err)
        event = self.daemon.wait_event(HANG, after=mark, event="config_reloaded")
        self.assertEqual((event["by_uid"], event["by"]), (admin.pw_uid, test_control.ADMIN_GROUP))

    def test_check_config_judges_files_without_a_daemon(self):
        conf = f"{self.workdir}/other/loginguard.conf"
        os.makedirs(f"{self.workdir}/other/rules.d")
        with open(f"{self.workdir}/other/rules.d/site.rules", "w") as f:
            f.write(json.dumps(NEW_RULE) + "\n")
        with open(conf, "w") as f:
            f.write(f"[daemon]\nmode = enforce\nrules_dirs = {self.workdir}/other/rules.d\n")
        code, out, err = self.check_config(conf)
        self.assertEqual((code, err), (0, ""))
        self.assertEqual(out, f"{conf}: OK (enforce mode, 3 levels, 1 rules)\n")
        # The same through --config, and --dump prints the policy in effect.
        code, out, err = self.check_config("--config", conf, "--dump")
        self.assertEqual(code, 0, err)
        self.assertIn("\nmode = enforce\n", out)
        self.assertIn(f"# [daemon] mode: {conf}:2", out)
        # Broken: every error with file and line, exit 1.
        with open(conf, "a") as f:
            f.write("[violation]\ncpu = 2 cors\nwindow = soon\n")
        code, out, err = self.check_config(conf)
        self.assertEqual((code, out), (1, ""))
        self.assertIn(f"{conf}:5: ", err)
        self.assertIn("'cores'", err)
        self.assertIn(f"{conf}:6: ", err)
        self.assertIn("nothing was changed", err.splitlines()[-1])
        code, out, err = self.check_config("--json", conf)
        self.assertEqual(code, 1)
        reply = json.loads(out)
        self.assertFalse(reply["ok"])
        self.assertEqual([e.split(": ")[0] for e in reply["errors"]], [f"{conf}:5", f"{conf}:6"])
        # A file that is not there, and usage.
        self.assertEqual(self.check_config(f"{self.workdir}/none.conf")[0], 1)
        self.assertEqual(self.check_config(conf, "--all")[0], 2)


if __name__ == "__main__":
    lgtest.run_tests()
