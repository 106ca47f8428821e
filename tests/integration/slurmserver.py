"""A real Slurm of a test's own: munged, slurmctld and slurmd (Debian's
Slurm 22.05 packages) in the foreground, on one node named lgnode that is
this machine, with their state, sockets, logs and ports in a temporary
directory.  Nothing of the machine's own Slurm or munge is used or
touched: the munge key and socket are the test's, and clients find the
config through SLURM_CONF.  Every process is ended by the PID it was
started with."""

import os
import pwd
import re
import shutil
import socket
import subprocess

from lgtest import HANG, wait_for


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SlurmServer:
    def __init__(self, workdir, partitions):
        """partitions: the PartitionName= lines of slurm.conf (Nodes=lgnode
        is added to each)."""
        missing = [p for p in ("munged", "mungekey", "slurmctld", "slurmd", "scontrol", "sbatch")
                   if not shutil.which(p)]
        if missing:
            raise AssertionError(f"Slurm is not installed ({', '.join(missing)} missing): "
                                 "tools/setup.sh --deps installs it")
        self.dir = f"{workdir}/slurm"
        self.conf = f"{self.dir}/slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.procs = {}
        munge = pwd.getpwnam("munge")
        for sub, owner, mode in (("state", 0, 0o755), ("spool", 0, 0o755),
                                 ("munge", munge.pw_uid, 0o755), ("key", munge.pw_uid, 0o700)):
            os.makedirs(f"{self.dir}/{sub}")
            os.chown(f"{self.dir}/{sub}", owner, munge.pw_gid if owner else 0)
            os.chmod(f"{self.dir}/{sub}", mode)
        os.chmod(workdir, 0o755)  # munged and slurmd's users walk through it
        self.socket = f"{self.dir}/munge/socket"
        self.partitions = list(partitions)
        self.ctld_port, self.d_port = free_port(), free_port()
        self.write_conf()
        try:
            self._start_munged(munge)
            self.start_ctld()
            self.procs["slurmd"] = self._spawn("slurmd", ["slurmd", "-D", "-N", "lgnode", "-f",
                                                          self.conf])
            wait_for(lambda: self.node_state() == "idle", HANG, "the Slurm node idle")
        except BaseException:
            self.stop()
            raise

    def write_conf(self):
        host = socket.gethostname().split(".")[0]
        lines = [
            "ClusterName=lgtest", f"SlurmctldHost={host}(127.0.0.1)", "SlurmUser=root",
            f"SlurmctldPort={self.ctld_port}", f"SlurmdPort={self.d_port}",
            "AuthType=auth/munge", f"AuthInfo=socket={self.socket}",
            f"StateSaveLocation={self.dir}/state", f"SlurmdSpoolDir={self.dir}/spool",
            f"SlurmctldPidFile={self.dir}/slurmctld.pid", f"SlurmdPidFile={self.dir}/slurmd.pid",
            f"SlurmctldLogFile={self.dir}/slurmctld.log", f"SlurmdLogFile={self.dir}/slurmd.log",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core_Memory",
            "ReturnToService=2", "MpiDefault=none",
            f"NodeName=lgnode NodeAddr=127.0.0.1 NodeHostname={host} CPUs=2 RealMemory=4000 "
            "State=UNKNOWN",
        ] + [f"{p} Nodes=lgnode" for p in self.partitions]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def _spawn(self, name, argv, **kw):
        log = open(f"{self.dir}/{name}.out", "a")
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                             cwd=self.dir, env=self.env, **kw)
        log.close()
        return p

    def _start_munged(self, munge):
        key = f"{self.dir}/key/munge.key"
        subprocess.run(["mungekey", "-c", "-k", key], check=True, capture_output=True)
        os.chown(key, munge.pw_uid, munge.pw_gid)

        def become():
            os.setgroups([])
            os.setresgid(munge.pw_gid, munge.pw_gid, munge.pw_gid)
            os.setresuid(munge.pw_uid, munge.pw_uid, munge.pw_uid)
        m = f"{self.dir}/munge"
        self.procs["munged"] = self._spawn("munged", [
            "munged", "-F", f"--socket={self.socket}", f"--key-file={key}",
            f"--pid-file={m}/pid", f"--log-file={m}/log", f"--seed-file={m}/seed"],
            preexec_fn=become)
        wait_for(lambda: os.path.exists(self.socket), HANG, "munged's socket")

    def start_ctld(self):
        self.procs["slurmctld"] = self._spawn("slurmctld", ["slurmctld", "-D", "-f", self.conf])
        wait_for(lambda: self.run("scontrol", "ping", check=False).returncode == 0, HANG,
                 "slurmctld answering")

    def stop_ctld(self):
        self._end("slurmctld")

    def restart_ctld(self):
        """slurmctld again, once it has its node back (until then Slurm
        says the node configuration is not available)."""
        self.start_ctld()
        wait_for(lambda: self.node_state() == "idle", HANG, "the Slurm node idle again")

    def _end(self, name):
        p = self.procs.pop(name, None)
        if p and p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=HANG)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def stop(self):
        for name in ("slurmd", "slurmctld", "munged"):
            self._end(name)

    def run(self, *argv, check=True):
        return subprocess.run(list(argv), capture_output=True, text=True, env=self.env,
                              timeout=HANG, check=check)

    def node_state(self):
        out = self.run("sinfo", "-h", "-N", "-o", "%t", check=False).stdout.split()
        return out[0].rstrip("*~#") if out else None  # a line per partition

    def job(self, job_id):
        """scontrol show job's Key=Value pairs ({} once the job is gone)."""
        out = self.run("scontrol", "show", "job", "--oneliner", str(job_id), check=False).stdout
        return dict(re.findall(r"(\w+)=(\S*)", out))

    def wait_job_done(self, job_id, timeout=HANG):
        return wait_for(lambda: (lambda j: j if j.get("JobState") in
                                 ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT") else None)(
                                     self.job(job_id)), timeout, f"Slurm job {job_id} to end")

    def reconfigure(self):
        self.write_conf()
        self.run("scontrol", "reconfigure")
