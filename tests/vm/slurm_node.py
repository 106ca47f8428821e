"""What the VM's Slurm scenarios put on the node and read back: its
slurm.conf and cgroup.conf (the node is its own one-node cluster, job
cgroups by Slurm's cgroup/v2 plugin, as sites run it), the program a
user runs (it records how it was run), and the command a user copies
out of a notice.  No VM here: vmtest.py drives the node."""

import re
import subprocess

# One node, the VM itself (its hostname); 2 CPUs, and less memory than
# the VM's 2 GiB (slurmd drains a node with less than it is said to have).
# The default partition is for one group only: a user outside it must
# never be offered it.  batch has the MaxTime a line must keep within.
SLURM_CONF = """\
ClusterName=loginnode
SlurmctldHost=loginnode
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MpiDefault=none
NodeName=loginnode CPUs=2 RealMemory=1500 State=UNKNOWN
PartitionName=restricted Nodes=loginnode Default=YES AllowGroups=slurmx MaxTime=02:00:00 State=UP
PartitionName=batch Nodes=loginnode MaxTime=00:30:00 State=UP
PartitionName=interactive Nodes=loginnode MaxTime=00:20:00 State=UP
"""

CGROUP_CONF = """\
CgroupPlugin=cgroup/v2
ConstrainCores=yes
ConstrainRAMSpace=yes
"""

RECORDS = "/var/tmp/records"

# Records where it runs and how it was run (/proc's cmdline, byte for
# byte) into RECORDS/<job id>, or RECORDS/login-<uid> outside a job,
# where it then spins: the hog.  In a job it ends.
RECORDER = f"""#!/bin/sh
name=${{SLURM_JOB_ID:-login-$(id -u)}}
{{ readlink /proc/$$/cwd; cat /proc/$$/cmdline; }} >{RECORDS}/$name
[ -n "$SLURM_JOB_ID" ] && exit 0
while :; do :; done
""".encode()

# Spaces, quotes, $, a backquote, a newline, bytes that are not UTF-8,
# a glob and an empty argument.
HOSTILE_ARGS = [b"a b", b"it's", b'"q"', b"$HOME", b"`id`", b"x\ny", b"caf\xe9 \xff", b"*", b""]


def sh_quote(word):
    """word (bytes) as one word of sh."""
    return b"'" + word.replace(b"'", b"'\\''") + b"'"


def start_script(cwd, program):
    """What the user types: into cwd, then program with the hostile
    arguments (exec: the hog is the login's own process)."""
    args = b" ".join(sh_quote(a) for a in HOSTILE_ARGS)
    return b"#!/bin/sh\ncd " + sh_quote(cwd) + b" || exit 1\nexec " + program + b" " + args + b"\n"


def command_line(text, tool):
    """tool's command (bytes) in a terminal's text, as the user would copy
    it: from the tool's name, line by line (a quoted argument may hold a
    newline), until sh reads it as one whole command.  What the user
    copies off the screen has no carriage returns before a line's end:
    the daemon ends a terminal's lines with CR LF, which the terminal's
    own output processing makes CR CR LF."""
    text = re.sub(rb"\r+\n", b"\n", text)
    start = text.find(tool + b" ")
    if start < 0:
        raise AssertionError(f"no {tool!r} command in {text!r}")
    lines = text[start:].split(b"\n")
    for n in range(1, len(lines) + 1):
        line = b"\n".join(lines[:n])
        if subprocess.run([b"/bin/sh", b"-n", b"-c", line], capture_output=True).returncode == 0:
            return line
    raise AssertionError(f"no whole {tool!r} command in {text!r}")


def job_fields(text):
    """scontrol show job --oneliner's Key=Value pairs."""
    return dict(re.findall(r"(\w+)=(\S*)", text))
