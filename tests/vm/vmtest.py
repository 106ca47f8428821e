#!/usr/bin/python3
"""System tests on a real login node: Debian 12 under qemu with systemd,
cgroup v2 and sshd, loginguard installed from the .debs just built, driven
over ssh on a loopback port forward (make check-vm).

Each scenario is what a user or an admin on the node would see; the whole
set runs once with the systemd backend (backend = auto) and once with the
cgroupfs backend on cgroup v2.  Timings of the package build, the image
(cold or cached), each boot and each scenario are printed.

  tests/vm/vmtest.py [--srcdir DIR] [--cache DIR] [--debs DIR] [--only BACKEND]
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

import slurm_node

HERE = os.path.dirname(os.path.abspath(__file__))
ALICE, BOB = 1001, 1002
SAMPLE = 1          # seconds: the daemon's sample_interval in the VM
SCAN = 2            # scan_interval
# The violation window: longer than a login's own burst of CPU, which
# under emulation on a busy host came to 0.47 cores over 5 s (bob was
# throttled for logging in).
WINDOW = 10
SHARE = 1.5         # cores: the standing share
# The VM shares the machine's cores with other tests: its two shell
# loops may get one core between them, three times the threshold.
THROTTLE = 0.5      # cores: level 1
RESTRICT = 0.2      # cores: level 2, which stops the offending programs
VIOLATION = 0.3     # cores: above this for WINDOW is a violation
DENY_LEVEL = 2      # pam_loginguard's account deny_level in sshd
# The memory scenario's user, a third one of its own, and its policy: a
# level's memory below the violation's threshold, as in the shipped
# ladder, so that once the level holds her she cannot be over the
# threshold again (no next rung races the test), and a threshold above
# what alice's and bob's idle logins hold.
CAROL = 1003
MEM_VIOLATION = 48 << 20    # bytes: above this for MEM_WINDOW is a violation
LEVEL_MEMORY = 40 << 20     # bytes: level 1's memory; 90 % of it is whole pages
MEM_WINDOW = 5              # seconds: the memory scenario's window
# How long a wait may last before the scenario is called hung (never the
# assertion: software emulation on a busy machine is slow, never wrong).
HANG = 120
TIMINGS = []
# Each backend's first failure and what the node looked like then: said
# again at the end, where a log cut short in the middle still shows it
# (the later failures of a backend mostly follow from its first).
FIRST_FAILURES = []


def policy(backend):
    return f"""# The system tests' policy: short windows, small numbers.
[daemon]
mode = enforce
sample_interval = {SAMPLE}s
scan_interval = {SCAN}s
stop_grace = 3s
backend = {backend}
cgroup_parent = /loginguard
[share]
cpu = {SHARE} cores
[violation]
cpu = {VIOLATION} cores
window = {WINDOW}s
decay = 1h
[level 1]
name = throttled
cpu = {THROTTLE} cores
stop = no
duration = 10m
[level 2]
name = restricted
cpu = {RESTRICT} cores
stop = yes
duration = 10m
[level 3]
name = restricted
cpu = {RESTRICT} cores
stop = yes
duration = 10m
"""


# Alice's hog: a busy shell loop.  The first time `loginguardctl me`
# says she is throttled it suspends itself, as she would with Ctrl-Z on
# reading the notice: so she stays at that level however slowly a busy
# machine lets the tests look (`pkill -CONT` lets it run on).  It asks
# the daemon rather than reading her cgroup's cpu.max: systemd writes
# that when it gets to it, which on a busy node can be seconds later.
HOG = ("sh -c 's=1; while :; do i=0; while [ $i -lt 500 ]; do i=$((i+1)); done; "
       "[ $s = 1 ] && loginguardctl me 2>/dev/null | grep -q \" 1 throttled\" "
       "&& s=0 && kill -STOP $$; done'")


def hogs_suspended(node):
    """Alice's hogs, both suspended by themselves (state T)."""
    states = node.vm.out("for p in $(pgrep -u alice -f '^sh -c s=1'); do "
                         "ps -o stat= -p $p; done; true").split()
    return len(states) == 2 and all(st.startswith("T") for st in states)


def run_ended(node):
    """Alice's hogs suspended, the run they began is over by the daemon's
    own account: their last seconds no longer count towards her next
    level, so a login of hers that starts a shell (a burst of CPU under
    emulation) cannot close that run's window."""
    pids = node.vm.out("pgrep -u alice -f '^sh -c s=1' || true").split()
    if not pids:
        return True
    r = node.vm.run(f"loginguardctl --json why {pids[0]}", check=False)
    try:
        user = json.loads(r.stdout)["why"]["user"]
    except (ValueError, KeyError, TypeError):
        return False
    return user.get("cpu_run") is None


def say(text):
    print(text, flush=True)


def timed(name, fn, *args):
    start = time.monotonic()
    try:
        return fn(*args)
    finally:
        took = time.monotonic() - start
        TIMINGS.append((name, took))
        say(f"timing: {name}: {took:.1f}s")


def wait_for(condition, timeout, what, interval=0.5):
    """Poll condition until it returns something true; its value, or a
    failure naming what was awaited."""
    end = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class VM:
    """One boot of the image: qemu in software emulation (the nested KVM
    of CI machines cannot boot a stock kernel), the disk a throw-away
    snapshot, sshd on 127.0.0.1 only."""

    def __init__(self, image, workdir):
        self.image = image
        self.dir = tempfile.mkdtemp(prefix="vm.", dir=workdir)
        self.port = free_port()
        self.key = os.path.join(self.dir, "id_ed25519")
        shutil.copy(os.path.join(image, "id_ed25519"), self.key)
        os.chmod(self.key, 0o600)
        self.console = os.path.join(self.dir, "console.log")
        self.pidfile = os.path.join(self.dir, "qemu.pid")
        self.monitor = os.path.join(self.dir, "monitor.sock")

    def unanswering(self):
        """What can be learnt of a guest that answers no ssh: qemu's own
        state on the host, and the guest kernel's list of blocked tasks
        and its CPUs' backtraces (SysRq w and l, typed through qemu's
        monitor), from the serial console."""
        lines = []
        try:
            pid = open(self.pidfile).read().strip()
            lines.append("  qemu on the host: " + subprocess.run(
                ["ps", "-o", "stat=,pcpu=,etime=,time=", "-p", pid], capture_output=True,
                text=True).stdout.strip())
        except OSError as e:
            lines.append(f"  qemu on the host: {e}")
        try:
            with socket.socket(socket.AF_UNIX) as m:
                m.settimeout(10)
                m.connect(self.monitor)
                for key in ("w", "l"):
                    m.sendall(f"sendkey alt-sysrq-{key}\n".encode())
                    time.sleep(5)
        except OSError as e:
            lines.append(f"  qemu's monitor: {e}")
        try:
            with open(self.console, errors="replace") as f:
                lines.append("  the console's last words:\n" + f.read()[-6000:])
        except OSError as e:
            lines.append(f"  the console: {e}")
        return "\n".join(lines)

    def boot(self):
        img = self.image
        subprocess.run([
            "qemu-system-x86_64", "-accel", "tcg,thread=multi,tb-size=512", "-cpu", "max",
            "-smp", "2", "-m", "2G", "-no-reboot",
            "-kernel", f"{img}/vmlinuz", "-initrd", f"{img}/initrd.img",
            "-append", "root=/dev/vda rw console=ttyS0 panic=-1 systemd.unified_cgroup_hierarchy=1 "
            "sysrq_always_enabled=1",
            "-drive", f"file={img}/root.img,format=raw,if=virtio,cache=unsafe", "-snapshot",
            "-netdev", f"user,id=n,hostfwd=tcp:127.0.0.1:{self.port}-:22",
            "-device", "virtio-net-pci,netdev=n", "-device", "virtio-rng-pci",
            "-display", "none", "-serial", f"file:{self.console}",
            "-monitor", f"unix:{self.monitor},server,nowait",
            "-pidfile", self.pidfile, "-daemonize"], check=True)

        def ready():
            try:
                with open(self.console, errors="replace") as f:
                    return "LOGINGUARD-VM-READY" in f.read()
            except FileNotFoundError:
                return False
        wait_for(ready, 180, "the VM's ready line on its console")

    def ssh_args(self, user, tty=False, shared=True):
        """shared: through one master connection per user (commands are
        quicker); a login of its own otherwise."""
        return ["ssh", "-i", self.key, "-p", str(self.port), "-o", "BatchMode=yes",
                "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=60"] + self.control(shared) + \
            (["-tt"] if tty else []) + [f"{user}@127.0.0.1"]

    def control(self, shared):
        return ["-o", f"ControlPath={self.dir}/ssh-%r", "-o", "ControlMaster=auto",
                "-o", "ControlPersist=120"] if shared else []

    def run(self, command, user="root", check=True, timeout=120, shared=True):
        r = subprocess.run(self.ssh_args(user, shared=shared) + [command], capture_output=True,
                           text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise AssertionError(f"as {user}: {command!r} exited {r.returncode}:\n"
                                 f"{r.stdout}{r.stderr}")
        return r

    def out(self, command, user="root", shared=True):
        return self.run(command, user, shared=shared).stdout

    def put(self, path, data, mode=0o644):
        """data (bytes) into root's file path on the node."""
        subprocess.run(self.ssh_args("root") + [f"cat >{path} && chmod {mode:o} {path}"],
                       input=data, check=True, timeout=120)

    def read(self, path):
        """The bytes of a file on the node."""
        return subprocess.run(self.ssh_args("root") + [f"cat {path}"], capture_output=True,
                              check=True, timeout=120).stdout

    def session(self, user, command, log, typed=None):
        """A login over ssh -tt running command (None: a login shell, which
        is where sshd shows what PAM said, with typed as its input), its
        terminal's output to log.  A connection of its own: a session of
        its own."""
        args = self.ssh_args(user, tty=True, shared=False)
        f = open(log, "w")
        p = subprocess.Popen(args + ([command] if command else []), stdout=f,
                             stderr=subprocess.STDOUT, start_new_session=True,
                             stdin=subprocess.PIPE if typed else subprocess.DEVNULL)
        if typed:
            p.stdin.write(typed.encode())
            p.stdin.flush()
        p.log = log
        return p

    def scp_in(self, files, where, shared=False):
        """shared: over root's master connection (a new login under
        emulation took 5 s)."""
        subprocess.run(["scp", "-q", "-i", self.key, "-P", str(self.port),
                        "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
                        "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR"]
                       + self.control(shared) + files + [f"root@127.0.0.1:{where}"], check=True)

    def stop(self):
        """The disk is a throw-away snapshot: nothing to shut down cleanly."""
        try:
            pid = int(open(self.pidfile).read())
        except (OSError, ValueError):
            return
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        wait_for(lambda: not os.path.exists(f"/proc/{pid}"), HANG, "qemu to end")


class Node:
    """The login node as the tests see it, for one backend."""

    def __init__(self, vm, backend):
        self.vm = vm
        self.backend = backend
        self.sessions = []

    def events(self, **match):
        text = self.vm.out("cat /var/log/loginguard/events.jsonl 2>/dev/null || true")
        found = []
        for line in text.splitlines():
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if all(e.get(k) == v for k, v in match.items()):
                found.append(e)
        return found

    def wait_event(self, timeout, after=0, **match):
        return wait_for(lambda: self.events(**match)[after:], timeout, f"an event {match}")[0]

    def user_cgroup(self, uid):
        if self.backend == "cgroupfs":
            return f"/sys/fs/cgroup/loginguard/user-{uid}"
        return f"/sys/fs/cgroup/user.slice/user-{uid}.slice"

    def cpu_max(self, uid):
        return self.vm.run(f"cat {self.user_cgroup(uid)}/cpu.max", check=False).stdout.strip()

    def nr_throttled(self, uid):
        """How many periods the kernel has throttled the user's cgroup in."""
        text = self.vm.out(f"awk '/^nr_throttled/ {{ print $2 }}' {self.user_cgroup(uid)}/cpu.stat")
        return int(text)

    def samples(self):
        """How many samples the daemon has taken (its metrics' count)."""
        for line in self.vm.out("loginguardctl metrics").splitlines():
            if line.startswith("loginguard_sample_duration_seconds_count "):
                return int(float(line.split()[1]))
        raise AssertionError("no sample count in loginguardctl metrics")

    def cores_used(self, uid, seconds=3):
        """The user's cgroup's CPU use over seconds, from its cpu.stat."""
        cg = self.user_cgroup(uid)
        text = self.vm.out(
            f"u() {{ awk '/^usage_usec/ {{ print $2 }}' {cg}/cpu.stat; }}; "
            f"t() {{ cut -d' ' -f1 /proc/uptime; }}; "
            f"a=$(u); s=$(t); sleep {seconds}; b=$(u); e=$(t); echo $a $s $b $e")
        a, s, b, e = (float(x) for x in text.split())
        return (b - a) / 1e6 / (e - s)

    def hogs_cores_used(self, user, seconds=3):
        """The CPU use of user's hogs (their shell loops) over seconds,
        from /proc: for when they are in no cgroup of the user's own."""
        text = self.vm.out(
            f"u() {{ for p in $(pgrep -u {user} -f 'while :'); do "
            f"sed 's/.*) //' /proc/$p/stat 2>/dev/null; done | "
            f"awk '{{ s += $12 + $13 }} END {{ print s + 0 }}'; }}; "
            f"t() {{ cut -d' ' -f1 /proc/uptime; }}; "
            f"a=$(u); s=$(t); sleep {seconds}; b=$(u); e=$(t); echo $a $s $b $e $(getconf CLK_TCK)")
        a, s, b, e, hz = (float(x) for x in text.split())
        return (b - a) / hz / (e - s)

    def status_row(self, name):
        for line in self.vm.out("loginguardctl status").splitlines():
            if line.split()[:1] == [name]:
                return line
        return ""

    def login(self, user, command, name, typed=None):
        p = self.vm.session(user, command, os.path.join(self.vm.dir, f"{name}.out"), typed)
        self.sessions.append(p)
        return p

    def close(self):
        for p in self.sessions:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait()


def session_output(p):
    with open(p.log, errors="replace") as f:
        return f.read()


def session_bytes(p):
    with open(p.log, "rb") as f:
        return f.read()


def cpu_max_cores(text):
    quota, _, period = text.partition(" ")
    return None if quota == "max" else int(quota) / int(period)


# ---- scenarios, in the order a node lives them ----

def install(node, debs, upgrade=True):
    vm = node.vm
    vm.scp_in(debs, "/root/")
    names = " ".join("/root/" + os.path.basename(d) for d in debs)
    vm.out(f"dpkg -i {names} >/root/dpkg.log 2>&1 || {{ cat /root/dpkg.log; exit 1; }}")
    # As an admin installs it: the service runs at once, in observe mode.
    assert vm.out("systemctl is-active loginguard").strip() == "active"
    assert "mode: observe" in vm.out("loginguardctl status")
    # The cluster link's program and its own user; the daemon itself
    # loads no database client.
    assert vm.out("id -u loginguard").strip() != "0"
    vm.out("test -x /usr/libexec/loginguard/loginguard-link")
    assert "libpq" not in vm.out("ldd /usr/sbin/loginguardd")
    if upgrade:
        # The site's edit of a conffile survives an upgrade (here: the same
        # version installed again; once, the packages are the same for both
        # backends).
        vm.out("echo '# site edit' >>/etc/loginguard/loginguard.conf")
        vm.out(f"dpkg -i {names} >/root/dpkg.log 2>&1")
        assert "# site edit" in vm.out("cat /etc/loginguard/loginguard.conf")
    vm.out("cat >/etc/loginguard/conf.d/vmtest.conf <<'EOF'\n" + policy(node.backend) + "EOF")
    vm.out("systemctl reload loginguard")
    wait_for(lambda: "mode: enforce" in vm.out("loginguardctl status"), HANG,
             "enforce mode after the reload")
    # The PAM module as pam_loginguard(8) says: the package's profile for
    # every session, and deny_level in sshd's account stack.
    vm.out("pam-auth-update --enable loginguard && grep -q pam_loginguard /etc/pam.d/common-session")
    vm.out(f"sed -i '/^@include common-account/a account [success=ok perm_denied=die "
           f"default=ignore] pam_loginguard.so deny_level={DENY_LEVEL}' /etc/pam.d/sshd")


def share_at_login(node):
    """A user's share is on their cgroup as soon as they log in, and their
    sessions stay where systemd put them across sweeps."""
    vm = node.vm
    node.bob = node.login("bob", "echo BOB-IN; sleep 600", "bob")
    wait_for(lambda: "BOB-IN" in session_output(node.bob) or node.bob.poll() is not None, 120,
             "bob's login")
    assert "BOB-IN" in session_output(node.bob), session_output(node.bob)
    share = wait_for(lambda: cpu_max_cores(node.cpu_max(BOB)) == SHARE, HANG,
                     f"bob's share of {SHARE} cores on {node.user_cgroup(BOB)}")
    assert share
    # Three sweeps later (sweeps come every SCAN, samples every SAMPLE):
    # with systemd, his sshd and shell are still in their session scope
    # (no sweep took them for strays); with cgroupfs, in his own cgroup.
    first = node.samples()
    wait_for(lambda: node.samples() >= first + 3 * SCAN // SAMPLE + 1, HANG, "three sweeps")
    cgroups = vm.out("for p in $(pgrep -u bob); do echo $(cat /proc/$p/comm) "
                     "$(cat /proc/$p/cgroup); done")
    say("  bob's processes after three sweeps: " + "; ".join(cgroups.strip().splitlines()))
    for line in cgroups.strip().splitlines():
        comm, path = line.split(" ", 1)
        path = path.split("::", 1)[1]
        if node.backend == "cgroupfs":
            # The PAM session placed the login; the sweep brings the rest.
            assert path == "/loginguard/user-1002", cgroups
        else:
            assert path.startswith("/user.slice/user-1002.slice/session-") or \
                path.startswith("/user.slice/user-1002.slice/user@1002.service/"), cgroups


def settled_login(node, user, name, command):
    """A login of user's over ssh -tt that runs command only once the
    login's own burst of CPU is out of the violation window.  The login
    waits on a FIFO, which costs nothing: a loop of `sleep 0.2` cost
    0.3 cores under emulation, so the wait itself was judged, and on a
    slow machine went on to the level that stops programs and ended the
    session before its command ran.  Under emulation on a busy host,
    sshd, PAM and a first systemd --user alone came to 0.56 cores over
    the 10 s window: a judgment the login drew is forgiven, as an admin
    would, until a whole window passes without one.  The number of the
    user's violation events so far is returned with the session."""
    go = f"/tmp/{name}.go"
    node.vm.out(f"rm -f {go}; mkfifo -m 0644 {go}")
    seen = len(node.events(event="violation", user=user))
    p = node.login(user, f"echo LOGGED-IN; read go < {go}; {command}", name)
    wait_for(lambda: "LOGGED-IN" in session_output(p) or p.poll() is not None, HANG,
             f"{user}'s login")
    assert "LOGGED-IN" in session_output(p), session_output(p)
    forgive_until_quiet(node, user, seen, "the login")
    assert p.poll() is None, f"{user}'s login ended before its command: " + session_output(p)
    node.vm.out(f"timeout 30 sh -c 'echo go > {go}'")
    return p, len(node.events(event="violation", user=user))


def forgive_until_quiet(node, user, seen, what):
    """A window of samples; a judgment of user's meanwhile (seen: their
    violations before), drawn by what, is forgiven as an admin would,
    until a whole window passes without one.  Their violations then."""
    for _ in range(3):
        first = node.samples()
        wait_for(lambda: node.samples() >= first + WINDOW // SAMPLE + 1, HANG,
                 f"a window of samples after {what}")
        judged = len(node.events(event="violation", user=user))
        if judged == seen:
            return seen
        seen = judged
        say(f"  {user} was judged for {what}: forgiven before the test goes on")
        forgiven = len(node.events(event="user_forgiven", user=user))
        node.vm.out(f"loginguardctl forgive {user} --reason '{what}, not the test'")
        node.wait_event(HANG, after=forgiven, event="user_forgiven", user=user)
    raise AssertionError(f"{user} judged three windows running after {what}")


def hog_is_throttled(node):
    """A 2-core hog over ssh -tt: limited, the notice in that session's
    output, the event logged, status shows the level."""
    node.hog, seen = settled_login(
        node, "alice", "alice", f"{HOG} & {HOG} & wait; echo SESSION-SURVIVED; sleep 600")
    node.wait_event(WINDOW + HANG, after=seen, event="violation", user="alice", level_after=1)
    # Throttled, her hogs suspend themselves: she stays at this level
    # while the next two scenarios look at it.
    wait_for(lambda: cpu_max_cores(node.cpu_max(ALICE)) == THROTTLE, HANG,
             f"alice's cgroup limited to {THROTTLE} cores")
    wait_for(lambda: hogs_suspended(node), HANG, "alice's hogs suspended")
    wait_for(lambda: run_ended(node), HANG, "the run of alice's hogs over")
    # The notice reaches her terminal as it is written: its first line,
    # then (a moment later over ssh) the sbatch line.
    wait_for(lambda: "are limited until" in session_output(node.hog) and
             "sbatch" in session_output(node.hog), HANG, "the notice in alice's ssh session")
    say("  alice's session shows: " + session_output(node.hog).split("***")[1].strip())
    row = node.status_row("alice")
    assert " 1 throttled " in row, row


def standing_at_next_login(node):
    """Throttled, alice logs in again: the PAM module shows her standing
    (sshd shows what PAM said to a login shell, as it does the motd)."""
    p = node.login("alice", None, "alice-login", typed="echo LOGGED-IN; exit\n")
    wait_for(lambda: p.poll() is not None, 120, "alice's second login to end")
    out = session_output(p)
    assert "LOGGED-IN" in out, out
    assert "loginguard: your processes on loginnode are" in out, out
    say("  shown at login: " + out.split("loginguard: ", 1)[1].splitlines()[0])
    row = node.status_row("alice")
    assert " 1 throttled " in row, row


def hog_measured_throttled(node):
    """The hog going on (fg) is held at the level's share: the kernel
    throttles her cgroup, and she gets no more than the share (a busy
    machine can only give her less), from the cgroup's cpu.stat."""
    node.vm.out("pkill -CONT -u alice -f 'while :'")
    first = node.nr_throttled(ALICE)
    wait_for(lambda: node.nr_throttled(ALICE) >= first + 3, HANG, "alice's cgroup throttled")
    used = node.cores_used(ALICE)
    say(f"  alice's 2-core hog throttled to {THROTTLE} cores uses {used:.2f} cores")
    assert used < THROTTLE * 1.15, used


def restricted_stops_program(node):
    """Still above the line while throttled: the next level stops the hog,
    and the session it ran in goes on."""
    node.wait_event(WINDOW + HANG, event="violation", user="alice", level_after=2)
    wait_for(lambda: "SESSION-SURVIVED" in session_output(node.hog), HANG,
             "the hog stopped and alice's shell going on")
    assert node.hog.poll() is None, "alice's ssh session ended"
    assert not node.vm.run("pgrep -u alice -f 'while :'", check=False).stdout.strip()
    assert cpu_max_cores(node.cpu_max(ALICE)) == RESTRICT
    assert " 2 restricted " in node.status_row("alice")


def refused_at_deny_level(node):
    """Restricted (deny_level 2): a new ssh login is refused and says why;
    bob still gets in; alice's open session goes on."""
    p = node.login("alice", "echo LOGGED-IN", "alice-refused")
    wait_for(lambda: p.poll() is not None, 120, "alice's refused login to end")
    out = session_output(p)
    assert p.returncode == 255 and "LOGGED-IN" not in out, (p.returncode, out)
    say("  alice's ssh client shows: " + " | ".join(out.strip().splitlines()[:3]))
    journal = node.vm.out("journalctl -t sshd -n 50 --no-pager")
    assert "refused alice" in journal, journal
    # A login of his own, through the account stack.
    assert node.vm.out("echo IN", user="bob", shared=False).strip() == "IN"
    assert node.hog.poll() is None, "alice's open session ended"


def penalty_survives_restart(node):
    """systemctl restart, then SIGKILL (systemd restarts it): the level and
    the limit stay.  A reload with a config error keeps the running policy;
    a start with one fails once, without a restart loop."""
    vm = node.vm
    for how in ("systemctl restart loginguard", "systemctl kill -s KILL loginguard"):
        before = vm.out("systemctl show -p MainPID --value loginguard").strip()
        vm.out(how)
        wait_for(lambda: vm.out("systemctl show -p MainPID --value loginguard").strip()
                 not in ("0", before) and
                 vm.run("systemctl is-active loginguard", check=False).stdout.strip() == "active",
                 HANG, f"loginguard running again after {how}")
        wait_for(lambda: " 2 restricted " in node.status_row("alice"), HANG,
                 f"alice still restricted after {how}")
        assert cpu_max_cores(node.cpu_max(ALICE)) == RESTRICT, node.cpu_max(ALICE)
    # A reload with an error: the running policy stays, the admin is told.
    vm.out("printf '[violation]\\ncpu = lots\\n' >/etc/loginguard/conf.d/zz-broken.conf")
    vm.out("systemctl reload loginguard")
    node.wait_event(HANG, event="config_error")
    assert vm.out("systemctl is-active loginguard").strip() == "active"
    # loginguardctl reads the socket's path from the broken config too,
    # says so and asks for --socket.
    r = vm.run("loginguardctl status", check=False)
    assert r.returncode != 0 and "--socket" in r.stderr, r.stderr
    status = vm.out("loginguardctl --socket /run/loginguard/control.sock status")
    assert "mode: enforce" in status, status
    assert [l for l in status.splitlines() if l.startswith("alice") and " 2 restricted " in l]
    # A restart with it: failed, said why, not restarted in a loop
    # ("failed", not "activating": systemd has no restart planned).
    r = vm.run("systemctl restart loginguard", check=False)
    assert r.returncode != 0
    wait_for(lambda: vm.run("systemctl is-active loginguard", check=False).stdout.strip()
             == "failed", HANG, "loginguard failed")
    assert vm.out("systemctl show -p NRestarts --value loginguard").strip() == "0"
    assert "zz-broken.conf" in vm.out("journalctl -u loginguard -n 20 --no-pager")
    # The limits stayed meanwhile; fixed, it starts with the penalty.
    assert cpu_max_cores(node.cpu_max(ALICE)) == RESTRICT
    vm.out("rm /etc/loginguard/conf.d/zz-broken.conf; systemctl start loginguard")
    assert " 2 restricted " in node.status_row("alice")


def me_and_forgive(node):
    """loginguardctl me as the user; forgive as root puts the share back."""
    vm = node.vm
    # As alice, from her session that goes on (ssh refuses her new ones).
    me = vm.out("runuser -u alice -- loginguardctl me")
    assert "restricted" in me, me
    r = vm.run("loginguardctl forgive bob", user="alice", check=False)
    assert r.returncode != 0, "alice forgave someone"
    # logrotate with the shipped config: the daemon's SIGHUP reopens the
    # log, the next event lands in the new one and the old ones stay in .1.
    vm.out("logrotate -f /etc/logrotate.d/loginguard")
    assert '"event":"violation"' in vm.out("cat /var/log/loginguard/events.jsonl.1")
    vm.out("loginguardctl forgive alice --reason 'system test'")
    node.wait_event(HANG, event="user_forgiven", user="alice")
    wait_for(lambda: cpu_max_cores(node.cpu_max(ALICE)) == SHARE, HANG,
             "alice's share back after forgive")
    # Forgiven, she logs in again.
    assert "restricted" not in vm.out("loginguardctl me", user="alice")


def memory_limits(node, *uids):
    """memory.max and memory.high of each user's cgroup, as the kernel
    says them ("-" for a file that is not there)."""
    text = node.vm.out("; ".join(
        f"echo {uid} $(cat {cg}/memory.max 2>/dev/null || echo -) "
        f"$(cat {cg}/memory.high 2>/dev/null || echo -)"
        for uid, cg in ((uid, node.user_cgroup(uid)) for uid in uids)))
    return {int(uid): (top, high) for uid, top, high in (l.split() for l in text.splitlines())}


def memory_events(node, uid):
    """The user's cgroup's memory.events as numbers (this cgroup's and
    those below it)."""
    text = node.vm.out(f"cat {node.user_cgroup(uid)}/memory.events")
    return {k: int(v) for k, v in (line.split() for line in text.splitlines())}


def oom_kills_in_kernel_log(node, uid):
    """The kernel's own record of each OOM kill of a memhog of the user's:
    the cgroup whose limit it was (oom_memcg=)."""
    found = []
    for line in node.vm.out("dmesg").splitlines():
        if "oom-kill:" in line and "task=memhog," in line and f"uid={uid}" in line:
            fields = dict(f.split("=", 1) for f in line.split("oom-kill:", 1)[1].split(",")
                          if "=" in f)
            found.append(fields.get("oom_memcg"))
    return found


def memory_held_on_v2(node):
    """A level's memory on cgroup v2: carol's 128 MiB over ssh is above
    the violation's 48 MiB for a window, and level 1 puts memory.max at its
    40 MiB with memory.high at 90 % of it; the kernel's OOM killer ends
    what she holds above it in her cgroup, then a hog of hers that grows
    past it, and her shell goes on.  loginguard stops nothing (its
    memory_over_level is for a user the kernel does not hold, as on v1).
    Alice and bob keep their share's memory."""
    vm = node.vm
    hog = os.path.join(vm.dir, "memhog")
    subprocess.run(["cc", "-static", "-O2", "-o", hog,
                    os.path.join(HERE, "..", "helpers", "memhog.c")], check=True)
    vm.scp_in([hog], "/usr/local/bin/", shared=True)
    high = LEVEL_MEMORY // 10 * 9
    others = memory_limits(node, ALICE, BOB)
    assert all(str(LEVEL_MEMORY) not in v and str(high) not in v for v in others.values()), others
    # carol, a user of the scenario's own.  For this scenario only: the
    # memory criterion, and level 1's memory; the CPU criterion off, so
    # that her login's own burst of CPU under emulation, or her hog's
    # growing, cannot take her to the level first (seen: 0.70 cores over
    # 10 s), and with it the reason for a 10 s window (a held amount of
    # memory is the same at every sample).  A drop-in named to be read
    # after vmtest.conf, whose [violation] it overrides.
    reloads = len(node.events(event="config_reloaded"))
    go = "/tmp/carol.go"
    passed = False
    try:
        dump = vm.out(
            f"useradd -m -s /bin/bash -u {CAROL} carol && "
            "install -d -o carol -g carol -m 700 /home/carol/.ssh && "
            "install -o carol -g carol -m 600 /root/.ssh/authorized_keys /home/carol/.ssh/ && "
            f"rm -f {go} && mkfifo -m 0644 {go} && "
            "cat >/etc/loginguard/conf.d/zz-memory.conf <<'EOF' && "
            "systemctl reload loginguard && loginguardd --check-config --dump\n"
            f"[violation]\ncpu = 0\nmemory = {MEM_VIOLATION >> 20}M\nwindow = {MEM_WINDOW}s\n"
            f"[level 1]\nmemory = {LEVEL_MEMORY >> 20}M\nEOF")
        # The policy the daemon reloads, as loginguardd --check-config --dump
        # reads the same files.
        section, policy = None, {}
        for line in dump.splitlines():
            if line.startswith("["):
                section = line
            elif " = " in line:
                policy[section, line.split(" = ")[0]] = line.split(" = ", 1)[1]
        for key, value in ((("[violation]", "cpu"), "0 cores"),
                           (("[violation]", "memory"), f"{MEM_VIOLATION >> 20}M"),
                           (("[violation]", "window"), f"{MEM_WINDOW}s"),
                           (("[level 1]", "memory"), f"{LEVEL_MEMORY >> 20}M")):
            assert policy.get(key) == value, (key, policy.get(key), dump)
        node.wait_event(HANG, after=reloads, event="config_reloaded")
        # 128 MiB, well above the threshold: what counts against her is her
        # cgroup's memory less the resident size of her exempt programs
        # (sshd, systemd --user), shared libraries and all (seen: 51.0 MiB
        # for a 64 MiB hog).
        p = node.login("carol", "echo LOGGED-IN; /usr/local/bin/memhog 128@0; echo HOG-ENDED $?; "
                       f"read go < {go}; /usr/local/bin/memhog 160@0; echo HOG-ENDED $?; "
                       f"read go < {go}; echo CAROL-OUT", "carol")
        v = node.wait_event(MEM_WINDOW + HANG, event="violation", user="carol")
        assert v["reason"] == "memory" and v["level_after"] == 1, v
        assert v["level"]["memory_bytes"] == LEVEL_MEMORY, v
        say(f"  carol's violation: {v['usage']['memory_bytes'] / 2**20:.1f} MiB over "
            f"{v['usage']['window_s']:.1f} s")
        limits = node.wait_event(HANG, event="limits_set", user="carol", level=1)
        assert limits["limits"]["memory_bytes"] == LEVEL_MEMORY, limits
        wanted = (str(LEVEL_MEMORY), str(high))
        wait_for(lambda: memory_limits(node, CAROL)[CAROL] == wanted, HANG,
                 f"memory.max, memory.high = {wanted} on {node.user_cgroup(CAROL)}")
        if node.backend == "auto":
            shown = vm.out(f"systemctl show -p MemoryMax -p MemoryHigh user-{CAROL}.slice")
            assert set(shown.split()) == {f"MemoryMax={LEVEL_MEMORY}", f"MemoryHigh={high}"}, \
                shown
        cgroup = node.user_cgroup(CAROL)[len("/sys/fs/cgroup"):]
        say(f"  carol's {cgroup}: memory.max {wanted[0]}, memory.high {wanted[1]}; "
            f"alice's and bob's (max, high): {others[ALICE]}, {others[BOB]}")
        # What she held above the new line: ended by the kernel (SIGKILL,
        # 128 + 9) in her cgroup, as the line was drawn.
        wait_for(lambda: "HOG-ENDED" in session_output(p) or p.poll() is not None, HANG,
                 "carol's 128 MiB hog to end")
        assert "HOG-ENDED 137" in session_output(p), session_output(p)
        assert oom_kills_in_kernel_log(node, CAROL) == [cgroup], vm.out("dmesg | tail -n 40")
        before = memory_events(node, CAROL)
        assert before["oom_kill"] >= 1, before
        # Held to the level, a hog that grows: slowed above memory.high,
        # ended at memory.max, by the kernel in her cgroup.
        vm.out(f"timeout 30 sh -c 'echo go > {go}'")
        wait_for(lambda: session_output(p).count("HOG-ENDED") == 2 or p.poll() is not None,
                 HANG, "carol's growing hog to end")
        out = session_output(p)
        assert out.count("HOG-ENDED 137") == 2, out
        after = memory_events(node, CAROL)
        say(f"  carol held at {LEVEL_MEMORY >> 20} MiB, her second hog asking 160 MiB: "
            f"memory.events {before} -> {after}")
        for key in ("high", "max", "oom_kill"):
            assert after[key] > before[key], (key, before, after)
        assert oom_kills_in_kernel_log(node, CAROL) == [cgroup, cgroup], \
            vm.out("dmesg | tail -n 40")
        # Her shell went on; loginguard itself stopped nothing of hers.
        assert p.poll() is None, out
        for kind in ("memory_over_level", "process_stopping"):
            assert not node.events(event=kind, user="carol"), node.events(event=kind, user="carol")
        assert memory_limits(node, ALICE, BOB) == others
        # Forgiven, her share's memory is back.
        vm.out("loginguardctl forgive carol --reason 'system test'")
        node.wait_event(HANG, event="user_forgiven", user="carol")
        wait_for(lambda: memory_limits(node, CAROL)[CAROL] == others[BOB], HANG,
                 "carol's share's memory back after forgive")
        vm.out(f"timeout 30 sh -c 'echo go > {go}'")
        wait_for(lambda: p.poll() is not None, HANG, "carol's session to end")
        assert "CAROL-OUT" in session_output(p), session_output(p)
        passed = True
    finally:
        back_to_own_policy(node, "rm -f /etc/loginguard/conf.d/zz-memory.conf", passed)


def back_to_own_policy(node, command, passed):
    """command (which takes a scenario's drop-in away), then a reload: the
    scenarios after run under the VM's own policy, even when this one
    failed (then its own failure is the one said, passed being false)."""
    reloads = len(node.events(event="config_reloaded"))
    node.vm.run(f"{command}; systemctl reload loginguard", check=False)
    try:
        node.wait_event(HANG, after=reloads, event="config_reloaded")
    except AssertionError:
        if passed:
            raise
        say("  and the VM's own policy was not reloaded after it")


# ---- Slurm: the node is its own cluster ----

DAVE = 1004
SPIN = "while :; do :; done"


def event_ms(event):
    """An event's time, in milliseconds of its day."""
    clock = event["time"].split("T")[1].rstrip("Z")
    h, m, sec = clock.split(":")
    return round(((int(h) * 60 + int(m)) * 60 + float(sec)) * 1000)


def slurm_status(node):
    return json.loads(node.vm.out("loginguardctl --json status"))["slurm"]


SLURM_DROPIN = "/etc/loginguard/conf.d/zz-slurm.conf"


def partition_names(node):
    return [p["name"] for p in slurm_status(node).get("partitions", [])]


def start_slurm(node):
    """munge, slurmctld and slurmd as systemd starts them (slurmd
    delegated its cgroup: job cgroups below
    system.slice/loginnode_slurmstepd.scope), dave a user of the
    scenario's own, and the daemon's reading of the partitions: asked
    every 10 s for the Slurm scenarios (a drop-in they remove), and at
    once by the reload that reads it."""
    vm = node.vm
    vm.put(SLURM_DROPIN, b"[notify]\nslurm_refresh = 10s\n")
    vm.put("/etc/slurm/slurm.conf", slurm_node.SLURM_CONF.encode())
    vm.put("/etc/slurm/cgroup.conf", slurm_node.CGROUP_CONF.encode())
    vm.put("/usr/local/bin/lgrecord", slurm_node.RECORDER, 0o755)
    vm.out(f"groupadd slurmx && useradd -m -s /bin/bash -u {DAVE} dave && "
           "install -d -o dave -g dave -m 700 /home/dave/.ssh && "
           "install -o dave -g dave -m 600 /root/.ssh/authorized_keys /home/dave/.ssh/ && "
           f"install -d -m 1777 {slurm_node.RECORDS} && "
           "systemctl start munge slurmctld slurmd")
    wait_for(lambda: vm.run("sinfo -h -N -o %t", check=False).stdout.split()[:1] == ["idle"],
             HANG, "the Slurm node idle")
    vm.out("systemctl reload loginguard")
    names = wait_for(lambda: partition_names(node) if "error" not in slurm_status(node)
                     else None, HANG, "the daemon's reading of the partitions")
    assert names == ["restricted", "batch", "interactive"], names


def slurm_job(node, job):
    return slurm_node.job_fields(node.vm.out(f"scontrol show job --oneliner {job}"))


def slurm_job_done(node, job):
    return wait_for(lambda: (lambda j: j if j.get("JobState") in
                             ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT") else None)(
                                 slurm_job(node, job)), HANG, f"Slurm job {job} to end")


def slurm_notice_runs_as_job(node):
    """dave's hog over ssh, run with hostile arguments from a directory
    with a space in its name: the notice's sbatch line, taken from his
    terminal as he saw it and run as him, is a job that completes on
    batch within its MaxTime, having run the same program the same way
    (its record, byte for byte); the srun --pty line runs it on a
    terminal on interactive.  The restricted default, not for his
    groups, is never offered."""
    vm = node.vm
    start_slurm(node)
    cwd = b"/home/dave/run dir"
    vm.out("install -d -o dave -g dave '/home/dave/run dir'")
    vm.put("/usr/local/bin/dave-hog", slurm_node.start_script(cwd, b"/usr/local/bin/lgrecord"),
           0o755)
    p, seen = settled_login(node, "dave", "dave", "/usr/local/bin/dave-hog")
    # What his terminal shows from here: a notice his login drew (then
    # forgiven) is before.
    shown = len(session_bytes(p))
    notices = len(node.events(event="notice", channel="tty", user="dave"))
    v = node.wait_event(WINDOW + HANG, after=seen, event="violation", user="dave")
    notice = node.wait_event(HANG, after=notices, event="notice", channel="tty", user="dave")
    check = notice["slurm_check"]
    assert (check["outcome"], check["partition"]) == ("accepted", "batch"), notice
    say(f"  sbatch --test-only as dave: {check['ms']} ms; the violation's event to the "
        f"notice's: {event_ms(notice) - event_ms(v)} ms")
    assert "restricted: not allowed for your groups" in check["said"], notice
    text = wait_for(lambda: (lambda t: t if b"--pty" in t else None)(session_bytes(p)[shown:]),
                    HANG, "the notice's srun line in dave's session")
    assert b"restricted" not in text, text
    say("  dave's session shows:\n" + text.decode(errors="replace").split("***", 1)[-1].rstrip())
    login = vm.read(f"{slurm_node.RECORDS}/login-{DAVE}")
    assert login.startswith(cwd + b"\n"), login
    vm.out(f"pkill -KILL -u dave -f lgrecord; rm {slurm_node.RECORDS}/login-{DAVE}")

    sbatch = slurm_node.command_line(text, b"sbatch")
    assert sbatch.startswith(b"sbatch -p batch -c 1 --mem=1G -t 00:30:00 -D "), sbatch
    r = vm.run(sbatch, user="dave")
    job = re.search(r"Submitted batch job (\d+)", r.stdout).group(1)
    state = slurm_job_done(node, job)
    assert (state["JobState"], state["Partition"], state["TimeLimit"]) == \
        ("COMPLETED", "batch", "00:30:00"), state
    say(f"  {r.stdout.strip()}: " + " ".join(f"{k}={state[k]}" for k in (
        "JobState", "Partition", "TimeLimit", "RunTime", "ExitCode")))
    ran = vm.read(f"{slurm_node.RECORDS}/{job}")
    assert ran == login, (ran, login, vm.out(f"cat '/home/dave/run dir/slurm-{job}.out'"))

    srun = slurm_node.command_line(text, b"srun")
    assert srun.startswith(b"srun -p interactive "), srun
    s = node.login("dave", srun, "dave-srun")
    wait_for(lambda: s.poll() is not None, HANG, "the srun line to end")
    records = vm.out(f"ls {slurm_node.RECORDS}").split()
    jobs = [n for n in records if n != job]
    assert len(jobs) == 1, (records, session_output(s))
    ran = vm.read(f"{slurm_node.RECORDS}/{jobs[0]}")
    assert ran == login, (ran, login, session_output(s))
    assert slurm_job(node, jobs[0])["Partition"] == "interactive"
    say(f"  job {job} on batch and job {jobs[0]} on interactive ran dave's program "
        f"as his login ran it: {login!r}")


def job_task(node, user):
    """The pid and cgroup of user's shell loop in a Slurm job, or None."""
    for line in node.vm.out(f"for p in $(pgrep -u {user} -x sh); do "
                            "echo $p $(cat /proc/$p/cgroup 2>/dev/null); done").splitlines():
        pid, _, cgroup = line.partition(" ")
        if "slurmstepd.scope/job_" in cgroup:
            return int(pid), cgroup
    return None


def slurm_job_left_alone(node):
    """A salloc job of dave's at full CPU on the node (its own compute
    node): not judged, not moved, not stopped; his hog outside the job is
    judged, throttled, then stopped.  The hog is salloc's sibling, both
    his shell's children, as a user runs them: loginguard ends what a
    program it stops started, and salloc ended ends its job.  Before the
    hog, batch is renamed compute in slurm.conf (scontrol reconfigure),
    then slurmctld stops: his notice still goes out, from the last
    answer, which has the new name, with its age in status, and the
    samples go on."""
    vm = node.vm
    forgiven = len(node.events(event="user_forgiven", user="dave"))
    vm.out("loginguardctl forgive dave --reason 'the next scenario'")
    node.wait_event(HANG, after=forgiven, event="user_forgiven", user="dave")
    go = "/tmp/dave-outside.go"
    vm.out(f"rm -f {go}; mkfifo -m 0644 {go}")
    p, seen = settled_login(
        node, "dave", "dave-salloc",
        f"salloc -p interactive srun sh -c '{SPIN}' >/tmp/salloc.out 2>&1 & "
        f"read go < {go}; sh -c '{SPIN}' & wait")
    passed = False
    try:
        pid, cgroup = wait_for(lambda: job_task(node, "dave"), HANG, "the salloc job's loop")
        job = re.search(r"/job_(\d+)/", cgroup).group(1)
        # salloc's and srun's own start (Slurm's clients, his, outside the
        # job) is a burst of CPU under emulation; the job's loop, were it
        # counted, would be judged at every window.
        seen = forgive_until_quiet(node, "dave", seen, "salloc and srun starting")
        first = node.samples()
        wait_for(lambda: node.samples() >= first + 2 * WINDOW // SAMPLE, HANG,
                 "two windows of samples")
        assert len(node.events(event="violation", user="dave")) == seen, \
            node.events(event="violation", user="dave")
        why = vm.out(f"loginguardctl why {pid}")
        assert f"part of Slurm job {job}" in why, why
        users = json.loads(vm.out("loginguardctl --json status --all"))["users"]
        row = next(u for u in users if u["uid"] == DAVE)
        assert row["slurm_jobs"] == 1 and row["cpu_cores"] < VIOLATION, row
        say(f"  dave's salloc job {job}: {row['slurm_cpu_cores']:.2f} cores in {cgroup}, "
            f"his own {row['cpu_cores']:.2f}")

        # batch renamed in slurm.conf: the daemon reads it at its next
        # query, with no word to loginguard; then slurmctld stops, and the
        # query after fails.
        vm.out("sed -i 's/^PartitionName=batch /PartitionName=compute /' /etc/slurm/slurm.conf "
               "&& scontrol reconfigure")
        wait_for(lambda: partition_names(node) == ["restricted", "compute", "interactive"],
                 HANG, "the renamed partition in the daemon's reading")
        vm.out("systemctl stop slurmctld")
        wait_for(lambda: "error" in slurm_status(node), HANG, "the failed query in status")
        notices = len(node.events(event="notice", channel="tty", user="dave"))
        stops = len(node.events(event="violation", user="dave", level_after=2))
        first = node.samples()
        shown = len(session_bytes(p))
        vm.out(f"timeout 30 sh -c 'echo go > {go}'")
        v = node.wait_event(WINDOW + HANG, after=seen, event="violation", user="dave")
        assert pid not in [q["pid"] for q in v["processes"]], v
        notice = node.wait_event(HANG, after=notices, event="notice", channel="tty", user="dave")
        assert notice["slurm_check"]["outcome"] == "unchecked", notice
        wait_for(lambda: b"sbatch -p compute " in session_bytes(p)[shown:], HANG,
                 "the notice's sbatch line, from the last answer, in dave's session")
        status = vm.out("loginguardctl status")
        assert "slurm: the last query failed" in status, status
        say("  status says: " + "\n    ".join(l for l in status.splitlines()
                                                if l.startswith("slurm:")))
        assert node.samples() >= first + 1
        # Still above the line while throttled: the next level stops his
        # loop outside the job; the job's runs on where Slurm put it.
        node.wait_event(WINDOW + HANG, after=stops, event="violation", user="dave", level_after=2)
        wait_for(lambda: not vm.run(f"pgrep -u dave -x sh | grep -vx {pid}", check=False).stdout,
                 HANG, "dave's loop outside the job stopped")
        assert job_task(node, "dave") == (pid, cgroup)
        state = vm.out(f"ps -o stat= -p {pid}").strip()
        assert state.startswith("R") or state.startswith("S"), state
        passed = True
    finally:
        back_to_own_policy(node, "pkill -KILL -u dave; systemctl stop slurmd slurmctld munge; "
                           f"rm -f {SLURM_DROPIN}", passed)


def purge_leaves_nothing(node):
    """apt-get purge: no daemon, no limit, no cgroup of loginguard's, no
    state or log left; the users' processes run on, unthrottled."""
    vm = node.vm
    # A penalty to lift: alice at level 1 again.
    seen = len(node.events(event="violation", user="alice", level_after=1))
    node.hog2 = node.login("alice", f"{HOG} & {HOG} & sleep 600", "alice2")
    node.wait_event(WINDOW + HANG, after=seen, event="violation", user="alice", level_after=1)
    # Throttled, her hogs suspend themselves before her next level stops them.
    wait_for(lambda: cpu_max_cores(node.cpu_max(ALICE)) == THROTTLE, HANG, "alice throttled")
    wait_for(lambda: hogs_suspended(node), HANG, "alice's hogs suspended")
    # The package's profile goes with the package; the admin's own
    # deny_level line stays behind in sshd, as it would on a real node.
    vm.out("apt-get purge -y -q loginguard libpam-loginguard >/root/purge.log 2>&1 "
           "|| { cat /root/purge.log; exit 1; }")
    assert not vm.run("pgrep -x loginguardd", check=False).stdout.strip()
    # No cgroup of loginguard's is left (with systemd it never made one).
    left = vm.out("find /sys/fs/cgroup/loginguard -maxdepth 1 -type d 2>&1 || true")
    assert "No such file" in left, f"left after the purge: {left}"
    if node.backend == "cgroupfs":
        # Her hogs were moved to the cgroup above /loginguard, the root;
        # none of her processes is left in a cgroup of loginguard's.
        hogs = vm.out("for p in $(pgrep -u alice -f 'while :'); do cat /proc/$p/cgroup; done")
        say("  alice's hogs after the purge: " + ", ".join(hogs.split()))
        assert hogs.split() and set(hogs.split()) == {"0::/"}, hogs
        cgroups = vm.out("cat $(for p in $(pgrep -u alice); do echo /proc/$p/cgroup; done) "
                         "2>/dev/null || true")
        assert "/loginguard" not in cgroups, cgroups
    else:
        for uid in (ALICE, BOB):
            limit = node.cpu_max(uid)
            assert limit in ("", "max 100000"), f"user {uid} still limited: {limit}"
        props = vm.out(f"systemctl show -p CPUQuotaPerSecUSec --value user-{ALICE}.slice")
        assert props.strip() == "infinity", props
    assert "pam_loginguard" not in vm.out("cat /etc/pam.d/common-session")
    # Its controls pass over the module that is gone: a new login goes on.
    assert "pam_loginguard" in vm.out("cat /etc/pam.d/sshd")
    assert vm.out("echo IN", user="bob", shared=False).strip() == "IN"
    left = vm.out("ls -d /var/lib/loginguard /var/log/loginguard 2>&1 || true")
    assert left.count("No such file") == 2, left
    # Of /etc/loginguard, only what the site wrote itself is left.
    left = vm.out("find /etc/loginguard -type f").split()
    assert left == ["/etc/loginguard/conf.d/vmtest.conf"], left
    # The hog runs free again: with cgroupfs in the root cgroup (above),
    # which nothing limits; with systemd her slice's cpu.max is "max"
    # (above).  What it gets is the busy machine's to give: a figure.
    vm.out("pkill -CONT -u alice -f 'while :'")
    used = node.hogs_cores_used("alice") if node.backend == "cgroupfs" \
        else node.cores_used(ALICE)
    say(f"  alice after the purge uses {used:.2f} cores")


SCENARIOS = [
    ("share at login", share_at_login),
    ("hog throttled, notice, event, status", hog_is_throttled),
    ("standing shown at the next login", standing_at_next_login),
    ("the hog measured throttled", hog_measured_throttled),
    ("restricted: program stopped, session survives", restricted_stops_program),
    ("deny_level refuses a restricted user's login", refused_at_deny_level),
    ("restart, SIGKILL, reload/start with a config error", penalty_survives_restart),
    ("me and forgive", me_and_forgive),
    ("a level's memory on v2: memory.high, memory.max, the kernel's OOM", memory_held_on_v2),
    # Slurm's job cgroups are systemd's on either backend: once is enough.
    ("Slurm: the notice's lines run as jobs", slurm_notice_runs_as_job, "auto"),
    ("Slurm: a salloc job left alone, the hog outside judged", slurm_job_left_alone, "auto"),
    ("purge leaves no limit", purge_leaves_nothing),
]


def build_debs(srcdir, workdir):
    """dpkg-buildpackage -us -uc -b on a copy of the tree (the build
    writes into debian/ and the tree)."""
    copy = os.path.join(workdir, "src")
    shutil.copytree(srcdir, copy, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", "build", "build-*", "autom4te.cache", "*.o", "*.lo", "*.la", ".libs", ".deps"))
    log = os.path.join(workdir, "dpkg-buildpackage.log")
    with open(log, "w") as f:
        r = subprocess.run(["dpkg-buildpackage", "-us", "-uc", "-b", f"-j{os.cpu_count()}"],
                           cwd=copy, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.stdout.write(open(log).read()[-5000:])
        raise SystemExit("dpkg-buildpackage failed")
    return sorted(os.path.join(workdir, n) for n in os.listdir(workdir)
                  if n.endswith(".deb") and "dbgsym" not in n)


def at_failure(node):
    """What the node looked like when a scenario failed: the latest
    events, systemd's jobs and the kernel's last words, and what each open
    ssh session has shown.  Over a connection of its own: the shared one
    may be what hangs (seen once: an apt-get purge that did not end in
    120 s, and every command after it over the same connection)."""
    try:
        r = node.vm.run("uptime; systemctl list-jobs --no-pager | tail -n 8; "
                        "dmesg | tail -n 15; tail -n 12 /var/log/loginguard/events.jsonl",
                        check=False, timeout=60, shared=False)
        state = r.stdout.rstrip()
    except subprocess.TimeoutExpired:
        state = "(no answer in 60 s over a new connection either)\n" + node.vm.unanswering()
    shown = [f"  session {os.path.basename(p.log)}: {session_output(p)[-400:]!r}"
             for p in node.sessions if p.poll() is None]
    return "\n".join(["  the node:", state] + shown)


def wanted(name, backends, backend, only):
    """Whether a scenario runs on this backend: it names no backends or
    this one, and with --scenario (only) its name holds one of the texts
    given, or it is share at login, which every scenario needs."""
    if backends and backend not in backends:
        return False
    return not only or name == "share at login" or any(o in name for o in only)


def run_backend(backend, image, debs, workdir, upgrade, only=None):
    passed = failed = 0
    vm = VM(image, workdir)
    node = Node(vm, backend)
    label = "systemd" if backend == "auto" else backend
    try:
        timed(f"[{label}] boot", vm.boot)
        timed(f"[{label}] install", install, node, debs, upgrade)
        for name, fn, *backends in SCENARIOS:
            if not wanted(name, backends, backend, only):
                continue
            try:
                timed(f"[{label}] {name}", fn, node)
                say(f"ok: [{label}] {name}")
                passed += 1
            except Exception as e:  # noqa: BLE001 - every failure is reported, then the next
                say(f"FAIL: [{label}] {name}: {e!r}\n{traceback.format_exc(limit=-2)}")
                state = at_failure(node)
                say(state)
                if not failed:
                    FIRST_FAILURES.append(f"FAIL: [{label}] {name}: {e!r}\n{state}")
                failed += 1
                if name == "share at login":
                    break
    except Exception as e:  # noqa: BLE001
        say(f"FAIL: [{label}] set-up: {e!r}\n{traceback.format_exc(limit=-2)}")
        failed += 1
        try:
            with open(vm.console, errors="replace") as f:
                say(f.read()[-3000:])
        except OSError:
            pass
    finally:
        if failed:
            try:
                r = vm.run("journalctl -u loginguard -n 40 --no-pager; "
                           "tail -n 20 /var/log/loginguard/events.jsonl", check=False,
                           timeout=60, shared=False)
                say(r.stdout)
            except subprocess.TimeoutExpired:
                say("(the node did not answer a new connection in 60 s)")
        node.close()
        vm.stop()
    return passed, failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--srcdir", default=os.path.dirname(os.path.dirname(HERE)))
    ap.add_argument("--cache", default=os.environ.get("LOGINGUARD_VM_CACHE") or (
        "/var/cache/loginguard-vm" if os.geteuid() == 0 else
        os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                     "loginguard-vm")))
    ap.add_argument("--debs", help="use these .debs' directory instead of building them")
    ap.add_argument("--only", choices=["auto", "cgroupfs"])
    ap.add_argument("--scenario", action="append", help="run only the scenarios whose names "
                    "hold this text (and share at login, which every one needs)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("vmtest.py: run as root (the image is built with mmdebstrap and chroot)")
    workdir = tempfile.mkdtemp(prefix="loginguard-vm.")
    try:
        def done_images():
            if not os.path.isdir(args.cache):
                return set()
            return {n for n in os.listdir(args.cache)
                    if os.path.exists(os.path.join(args.cache, n, "done"))}
        # The image (mostly downloads and unpacking) is made while the
        # packages build (mostly compiling).
        before = done_images()
        start = time.monotonic()
        making = subprocess.Popen([os.path.join(HERE, "image.sh"), args.cache],
                                  stdout=subprocess.PIPE, text=True)
        if args.debs:
            debs = sorted(os.path.join(args.debs, n) for n in os.listdir(args.debs)
                          if n.endswith(".deb") and "dbgsym" not in n)
        else:
            debs = timed("packages (dpkg-buildpackage)", build_debs, args.srcdir, workdir)
        say("packages: " + " ".join(os.path.basename(d) for d in debs))
        out, _ = making.communicate()
        if making.returncode != 0:
            raise SystemExit(f"image.sh failed ({making.returncode})")
        image = out.strip().splitlines()[-1]
        took = time.monotonic() - start
        kind = "cached" if os.path.basename(image) in before else "cold"
        TIMINGS.append((f"image ({kind}, beside the packages)", took))
        say(f"timing: image ({kind}, beside the packages): {took:.1f}s")
        # The VM shares the machine with whatever else runs (CI runs the
        # integration tests beside it): the scenarios wait on conditions,
        # never on how soon.
        passed = failed = 0
        backends = [args.only] if args.only else ["auto", "cgroupfs"]
        for backend in backends:
            p, f = run_backend(backend, image, debs, workdir, upgrade=backend == backends[0],
                               only=args.scenario)
            passed += p
            failed += f
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    say("timings:")
    for name, took in TIMINGS:
        say(f"  {took:7.1f}s  {name}")
    for text in FIRST_FAILURES:
        say("the first failure of a backend, again:\n" + text)
    say(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
