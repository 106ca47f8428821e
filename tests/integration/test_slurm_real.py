"""Notices against a real Slurm (Debian's 22.05: munged, slurmctld and
slurmd of the test's own, slurmserver.py): the line a user reads on
their terminal, pasted as it stands, runs the same program as a job; a
partition the user's groups may not use is never offered; a partition
renamed in slurm.conf shows up in the next notice; with slurmctld
stopped, notices still go out at once.  (The VM's system test runs a
Slurm with cgroup v2 job cgroups; this one is the cheaper host half.)"""

import os
import re
import signal
import subprocess

import lgtest
from lgtest import wait_for
from slurmserver import SlurmServer
from test_slurm import WINDOW, slurm_policy, slurm_status

HANG = lgtest.HANG

# Writes what it was run as, /proc/self/cmdline and its working
# directory, into RECORDS/<job id>, or RECORDS/login-<uid> on the login
# node, where it then spins (a hog); in a job it ends.
RECORDER = """#!/usr/bin/python3
import os
name = os.environ.get("SLURM_JOB_ID", "login-%d" % os.getuid())
with open("/proc/self/cmdline", "rb") as f:
    argv = f.read()
with open(os.path.join(RECORDS, name), "wb") as f:
    f.write(os.getcwdb() + b"\\n" + argv)
while name.startswith("login"):
    pass
"""

HOSTILE_ARGS = ["a b", "it's", '"q"', "$HOME", "`id`", "x\ny", b"caf\xe9 \xff", "*", ""]

PARTITIONS = [
    # The default: only for a group the test users are mostly not in.
    "PartitionName=restricted Default=YES AllowGroups=lgslurmx MaxTime=02:00:00 State=UP",
    "PartitionName=batch MaxTime=00:30:00 State=UP",
    "PartitionName=interactive MaxTime=00:20:00 State=UP",
]


class RealSlurm(lgtest.DaemonTestCase):
    @classmethod
    def policy(cls):
        return slurm_policy(cls.parent, cls.workdir, "tty, login", "10s")

    @classmethod
    def prepare(cls):
        # slurmctld reads group members at its start.
        subprocess.run(["groupadd", "lgslurmx"], check=True)
        cls.addClassCleanup(subprocess.run, ["groupdel", "lgslurmx"], check=False)
        cls.member = cls.users.add("lgtest58")
        subprocess.run(["usermod", "-aG", "lgslurmx", "lgtest58"], check=True)
        cls.slurm = SlurmServer(cls.workdir, PARTITIONS)
        cls.addClassCleanup(cls.slurm.stop)
        cls.records = f"{cls.workdir}/records"
        os.makedirs(cls.records)
        os.chmod(cls.records, 0o1777)
        cls.recorder = f"{cls.workdir}/lgrecord"
        with open(cls.recorder, "w") as f:
            f.write(RECORDER.replace("RECORDS", repr(cls.records)))
        os.chmod(cls.recorder, 0o755)

    @classmethod
    def make_daemon(cls):
        return lgtest.Daemon(cls.workdir, cls.policy(), env=cls.slurm.env)

    def setUp(self):
        super().setUp()
        # Each test starts with the daemon's word from a Slurm that
        # answers (one that stopped slurmctld started it again, and a
        # reload asks at once rather than at the next refresh).
        if "error" in self.slurm_status():
            self.daemon.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: (lambda s: s.get("partitions") and "error" not in s)(
            self.slurm_status()), 3 * HANG, "the daemon's Slurm view without an error")

    def slurm_status(self):
        return slurm_status(self.daemon)

    def partitions_read(self, names):
        wait_for(lambda: [p["name"] for p in self.slurm_status().get("partitions", [])] == names,
                 3 * HANG, f"the daemon to read the partitions {names}")

    def hog(self, user, cwd="/"):
        """The recorder as a hog of user's on a terminal of theirs, with
        hostile arguments; what the terminal shows once its notice, both
        lines of it, is there."""
        master, tty = lgtest.user_pty(self, user)
        mark = self.daemon.mark()
        self.procs.start([self.recorder] + HOSTILE_ARGS, user, tty=tty, cwd=cwd)
        self.daemon.wait_event(WINDOW + HANG, after=mark, event="violation", uid=user.pw_uid)
        event = self.daemon.wait_event(HANG, after=mark, event="notice", channel="tty",
                                       uid=user.pw_uid)
        return event, lgtest.read_terminal(master, b"--pty", HANG)

    @staticmethod
    def command_line(text, tool):
        """The tool's command in the terminal's text, as the user would
        copy it: from the tool's name, line by line (a quoted argument may
        hold a newline) until sh reads it as a whole command."""
        lines = text[text.index(tool + " "):].split("\n")
        for n in range(1, len(lines) + 1):
            line = "\n".join(lines[:n])
            if subprocess.run(["/bin/sh", "-n", "-c", line], capture_output=True).returncode == 0:
                return line
        raise AssertionError(f"no whole {tool} command in {text!r}")

    def run_as(self, user, line):
        """line run by sh as user, from /tmp (not where the program ran)."""
        def become():
            os.setgroups([])
            os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
            os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
        return subprocess.run(["/bin/sh", "-c", line], capture_output=True, preexec_fn=become,
                              env=dict(self.slurm.env, HOME="/tmp", USER=user.pw_name),
                              cwd="/tmp", timeout=3 * HANG)

    def record(self, name):
        with open(f"{self.records}/{name}", "rb") as f:
            return f.read()

    def test_the_notice_line_runs_the_same_program_as_a_job(self):
        user = self.users.add("lgtest57")
        cwd = f"{self.workdir}/run dir"
        os.makedirs(cwd)
        os.chown(cwd, user.pw_uid, user.pw_gid)
        event, text = self.hog(user, cwd=cwd)
        self.assertEqual((event["slurm_check"]["outcome"], event["slurm_check"]["partition"]),
                         ("accepted", "batch"), event)
        self.assertIn("restricted: not allowed for your groups", event["slurm_check"]["said"])
        login = self.record(f"login-{user.pw_uid}")
        self.procs.stop_all()

        sbatch = self.command_line(text, "sbatch")
        self.assertIn("sbatch -p batch -c 1 --mem=1G -t 00:30:00 -D ", sbatch)
        done = self.run_as(user, sbatch)
        self.assertEqual(done.returncode, 0, done.stderr)
        job = re.search(rb"Submitted batch job (\d+)", done.stdout).group(1).decode()
        state = self.slurm.wait_job_done(job)
        self.assertEqual((state["JobState"], state["Partition"], state["TimeLimit"]),
                         ("COMPLETED", "batch", "00:30:00"), state)
        # The same program, byte for byte, where it ran on the login node.
        self.assertEqual(self.record(job), login)
        self.assertTrue(login.startswith(os.fsencode(cwd) + b"\n"), login)

        srun = self.command_line(text, "srun")
        self.assertIn("srun -p interactive ", srun)
        done = self.run_as(user, srun)   # no terminal: srun says --pty is set aside
        self.assertEqual(done.returncode, 0, done.stderr)
        jobs = [n for n in os.listdir(self.records) if n.isdigit() and n != job]
        self.assertEqual(len(jobs), 1, (jobs, srun, done.stdout, done.stderr))
        self.assertEqual(self.record(jobs[0]), login)
        self.assertEqual(self.slurm.job(jobs[0])["Partition"], "interactive")

    def test_a_member_of_the_group_is_offered_its_partition(self):
        event, text = self.hog(self.member)
        self.assertEqual(event["slurm_check"]["partition"], "restricted", event)
        self.assertIn("sbatch -p restricted -c 1 --mem=1G -t 01:00:00 ", text)

    def test_a_renamed_partition_is_in_the_next_notice(self):
        self.partitions_read(["restricted", "batch", "interactive"])
        self.slurm.partitions[1] = self.slurm.partitions[1].replace("=batch ", "=compute ")
        self.addCleanup(self.rename_back)
        self.slurm.reconfigure()
        # At the next refresh, without a word to loginguard.
        self.partitions_read(["restricted", "compute", "interactive"])
        event, text = self.hog(self.users.add("lgtest59"))
        self.assertEqual(event["slurm_check"]["partition"], "compute", event)
        self.assertIn("sbatch -p compute ", text)

    def rename_back(self):
        self.slurm.partitions[1] = PARTITIONS[1]
        self.slurm.reconfigure()

    def test_slurmctld_stopped_notices_still_go_out(self):
        self.partitions_read(["restricted", "batch", "interactive"])
        self.slurm.stop_ctld()
        self.addCleanup(self.slurm.restart_ctld)
        self.daemon.proc.send_signal(signal.SIGHUP)  # asked again now
        status = wait_for(lambda: (lambda s: s if "error" in s else None)(self.slurm_status()),
                          3 * HANG, "the failed query in status")
        self.assertEqual(len(status["partitions"]), 3, "the last good answer is kept")
        first = self.daemon.samples()
        event, text = self.hog(self.users.add("lgtest76"))
        self.assertEqual(event["slurm_check"]["outcome"], "unchecked", event)
        # Its groups checked all the same: never the partition they may
        # not use.
        self.assertIn("sbatch -p batch ", text)
        self.assertNotIn("restricted", text)
        self.assertGreater(self.daemon.samples(), first)
        self.assertIn("slurm: the last query failed", self.daemon.ctl("status"))


if __name__ == "__main__":
    lgtest.run_tests()
