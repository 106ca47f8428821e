"""Notices and Slurm, on the host without Slurm's daemons: the real
loginguardd reads the partitions from `scontrol show partition
--oneliner` and has `sbatch --test-only` check a notice's line as the
user before it offers it.  scontrol and sbatch here are stand-ins (no
slurmctld runs on the test machine): scontrol prints recorded 22.05
output, or fails or hangs as a controller that is down does; sbatch
answers as Slurm 22.05.8 did for the same requests
(tests/fixtures/slurm/22.05), and writes down who ran it with what.
The VM's system test runs a real munge, slurmctld and slurmd."""

import json
import os
import pwd
import signal
import subprocess

import lgtest
from lgtest import wait_for

HANG = lgtest.HANG
SAMPLE = 0.5
WINDOW = 2.0
CPU = 0.3               # cores, the violation threshold


# Four partitions as 22.05 prints them: the default one refuses the
# users (AllowAccounts the stand-in sbatch enforces), "long" takes them
# within 8 hours, "secret" is for a group they are not in, "interactive"
# is for srun.
PARTITIONS = """\
PartitionName=batch AllowGroups=ALL AllowAccounts=physics AllowQos=ALL Default=YES QoS=N/A DefaultTime=01:00:00 MaxTime=2-00:00:00 MaxCPUsPerNode=2 MaxMemPerNode=16000 State=UP TRES=cpu=2,mem=22057M,node=1
PartitionName=long AllowGroups=ALL AllowAccounts=ALL Default=NO QoS=N/A DefaultTime=NONE MaxTime=08:00:00 MaxCPUsPerNode=UNLIMITED MaxMemPerNode=UNLIMITED State=UP
PartitionName=secret AllowGroups=lgslurmsecret AllowAccounts=ALL Default=NO QoS=N/A MaxTime=UNLIMITED State=UP
PartitionName=interactive AllowGroups=ALL AllowAccounts=ALL Default=NO QoS=normal DefaultTime=00:30:00 MaxTime=04:00:00 State=UP
"""

# scontrol: the partitions, or what a controller that is down gives.
SCONTROL = """#!/bin/sh
dir=$(dirname "$0")
case $(cat "$dir/mode" 2>/dev/null) in
down) echo "slurm_load_partitions: Unable to contact slurm controller (connect failure)"; exit 1 ;;
hang) exec sleep 600 ;;
esac
cat "$dir/partitions"
"""

# sbatch --test-only: refuses the partitions named in "refuse", with
# 22.05's words; writes who ran it and its arguments to calls/.
SBATCH = """#!/bin/sh
dir=$(dirname "$0")
printf '%s\\n' "$(id -un)" "$@" > "$dir/calls/$(date +%s%N).$$"
part=
while [ $# -gt 0 ]; do [ "$1" = -p ] && part=$2; shift; done
if grep -qx "$part" "$dir/refuse"; then
    echo "allocation failure: Invalid account or account/partition combination specified"
    exit 1
fi
echo "sbatch: Job 7 to start at 2026-11-28T23:23:44 using 1 processors on nodes vm in partition $part" >&2
"""


def slurm_policy(parent, workdir, channels, refresh):
    """A policy that throttles a 1-core hog within WINDOW and asks Slurm."""
    return lgtest.policy(
        lgtest.enforcing(parent, workdir, sample_interval=f"{SAMPLE:g}s"),
        violation=lgtest.violation(CPU, WINDOW),
        levels=[lgtest.level("throttled", cpu=0.15, memory="1G", stop=False, duration="10m")],
        notify={"channels": channels, "rate_limit": "1h", "slurm": "yes",
                "slurm_refresh": refresh})


def slurm_status(daemon):
    """status' Slurm part, as loginguardctl status --json gives it."""
    return json.loads(daemon.ctl("status", "--json"))["slurm"]


class Slurm(lgtest.DaemonTestCase):
    @classmethod
    def policy(cls):
        return slurm_policy(cls.parent, cls.workdir, "login", "30s")

    @classmethod
    def prepare(cls):
        cls.bin = f"{cls.workdir}/slurmbin"
        os.makedirs(f"{cls.bin}/calls")
        os.chmod(f"{cls.bin}/calls", 0o1777)
        for name, text in (("scontrol", SCONTROL), ("sbatch", SBATCH),
                           ("partitions", PARTITIONS), ("refuse", "batch\n"), ("mode", "")):
            with open(f"{cls.bin}/{name}", "w") as f:
                f.write(text)
            os.chmod(f"{cls.bin}/{name}", 0o755 if name in ("scontrol", "sbatch") else 0o644)

    @classmethod
    def make_daemon(cls):
        env = dict(os.environ, PATH=f"{cls.bin}:/usr/sbin:/usr/bin:/sbin:/bin")
        return lgtest.Daemon(cls.workdir, cls.policy(), env=env)

    def setUp(self):
        super().setUp()
        self.set_file("mode", "")
        self.set_file("refuse", "batch\n")
        # A test that broke scontrol left its error: a reload asks again
        # at once rather than at the next refresh.
        if "error" in self.slurm_status():
            self.daemon.proc.send_signal(signal.SIGHUP)

    def set_file(self, name, text):
        with open(f"{self.bin}/{name}", "w") as f:
            f.write(text)

    def slurm_status(self):
        return slurm_status(self.daemon)

    def answered(self, after=0):
        """The daemon's Slurm view once it has read the partitions (the
        query count past after)."""
        return wait_for(lambda: (lambda s: s if s.get("partitions") is not None and
                                 s["queries"] > after and "error" not in s else None)(
                                     self.slurm_status()), HANG, "Slurm's partitions read")

    def run_hog(self, user):
        """A busy program with a command line, throttled: its notice
        offers the sbatch line for that command."""
        mark = self.daemon.mark()
        self.procs.start([self.spin, "1", "1", "300", "in put.dat"], user)
        self.daemon.wait_event(WINDOW + HANG, after=mark, event="violation", uid=user.pw_uid)
        return self.daemon.wait_event(HANG, after=mark, event="notice", channel="login",
                                      uid=user.pw_uid)

    def login_notice(self, user):
        with open(f"{self.workdir}/login-notices/{user.pw_uid}.json") as f:
            return json.load(f)["notices"][-1]["body"]

    def sbatch_calls(self, user):
        calls = []
        for name in sorted(os.listdir(f"{self.bin}/calls")):
            with open(f"{self.bin}/calls/{name}") as f:
                words = f.read().split("\n")[:-1]
            if words[0] == user.pw_name:
                calls.append(words[1:])
        return calls

    def test_status_shows_the_partitions_and_their_age(self):
        s = self.answered()
        self.assertTrue(s["enabled"])
        self.assertEqual(s["scontrol"], f"{self.bin}/scontrol")
        self.assertEqual([p["name"] for p in s["partitions"]],
                         ["batch", "long", "secret", "interactive"])
        batch = s["partitions"][0]
        self.assertTrue(batch["default"])
        self.assertEqual(batch["max_time"], "2-00:00:00")
        self.assertEqual(s["partitions"][2]["allow_groups"], ["lgslurmsecret"])
        self.assertIsInstance(s["age_seconds"], int)  # how old the answer is, shown
        text = self.daemon.ctl("status")
        self.assertIn("slurm: 4 partitions, read ", text)
        self.assertIn("batch (up, default, max 2-00:00:00)", text)

    def test_the_notice_offers_the_partition_slurm_accepts(self):
        self.answered()
        user = self.users.add("lgtest54")
        event = self.run_hog(user)
        check = event["slurm_check"]
        self.assertEqual((check["outcome"], check["partition"]), ("accepted", "long"), event)
        self.assertIn("batch: allocation failure: Invalid account", check["said"])
        body = self.login_notice(user)
        # The line Slurm took, sized within long's 8 hours; never the
        # refused default, never the group's partition.
        self.assertIn("sbatch -p long -c 1 --mem=1G -t 01:00:00 -D / --wrap ", body)
        self.assertIn("srun -p interactive ", body)
        self.assertNotIn("-p batch", body)
        self.assertNotIn("secret", body)
        # Slurm was asked as the user, with the line's own words.
        calls = self.sbatch_calls(user)
        self.assertEqual([c[:4] for c in calls],
                         [["--test-only", "-p", "batch", "-c1"],
                          ["--test-only", "-p", "long", "-c1"]])
        self.assertEqual(calls[1][-2:], ["--wrap", f"{self.spin} 1 1 300 'in put.dat'"])

    def test_a_line_slurm_refuses_is_not_offered(self):
        self.answered()
        self.set_file("refuse", "batch\nlong\n")
        user = self.users.add("lgtest55")
        event = self.run_hog(user)
        check = event["slurm_check"]
        self.assertEqual(check["outcome"], "refused", event)
        self.assertIn("long: allocation failure", check["said"])
        body = self.login_notice(user)
        self.assertNotIn("sbatch -p", body)
        self.assertIn("(none: Slurm refused every line loginguard could offer here: batch: "
                      "allocation failure: Invalid account", body)

    def test_slurmctld_down_keeps_the_last_answer(self):
        before = self.answered()["queries"]
        self.set_file("mode", "down")
        self.daemon.proc.send_signal(signal.SIGHUP)  # a reload asks again at once
        s = wait_for(lambda: (lambda s: s if "error" in s else None)(self.slurm_status()), HANG,
                     "the failed query in status")
        self.assertGreater(s["queries"], before)
        self.assertIn("Unable to contact slurm controller", s["error"])
        self.assertEqual(len(s["partitions"]), 4, "the last good answer is kept")
        self.assertIn("slurm: the last query failed", self.daemon.ctl("status"))
        # Notices still go out at once, on the last answer, unchecked:
        # sbatch would only wait for the controller.
        user = self.users.add("lgtest56")
        event = self.run_hog(user)
        self.assertEqual(event["slurm_check"]["outcome"], "unchecked", event)
        self.assertIn("Unable to contact slurm controller", event["slurm_check"]["why"])
        self.assertIn("sbatch -p batch -c 1 --mem=1G -t 01:00:00", self.login_notice(user))
        self.assertEqual(self.sbatch_calls(user), [])

    def test_a_hung_scontrol_delays_no_sample(self):
        self.answered()
        self.set_file("mode", "hang")
        first = self.daemon.samples()
        self.daemon.proc.send_signal(signal.SIGHUP)
        # The query is killed at its deadline; meanwhile samples go on.
        s = wait_for(lambda: (lambda s: s if "did not answer" in s.get("error", "") else None)(
            self.slurm_status()), 2 * HANG, "the hung query given up")
        self.assertEqual(len(s["partitions"]), 4)
        self.assertGreater(self.daemon.samples(), first + 5)


if __name__ == "__main__":
    lgtest.run_tests()
