"""Helpers for loginguard's integration tests: test users, processes run
as them, a daemon on a private config, and waiting on its event log.

Everything here is real: real users (lgtest*, made and removed here),
real processes, the real daemon reading the real /proc.  Nothing is
mocked.  Tests need root; without it they exit 77 (automake's "skip")."""

import errno
import fcntl
import json
import os
import pty
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

TOP_SRCDIR = os.environ.get("LG_TOP_SRCDIR", os.path.join(os.path.dirname(__file__), "..", ".."))
TOP_BUILDDIR = os.environ.get("LG_TOP_BUILDDIR", TOP_SRCDIR)
DAEMON = os.path.join(TOP_BUILDDIR, "daemon", "loginguardd")
SPIN = os.path.join(TOP_BUILDDIR, "tests", "helpers", "spin")
MEMHOG = os.path.join(TOP_BUILDDIR, "tests", "helpers", "memhog")
SHIPPED_RULES = os.path.join(TOP_SRCDIR, "rules", "rules.d")
SHIPPED_CONF = os.path.join(TOP_SRCDIR, "rules", "loginguard.conf")
SHIPPED_NOTICES = os.path.join(TOP_SRCDIR, "rules", "notices")
# The cluster link: the program just built (installed, the daemon runs
# the one in its libexec directory), as a test user of its own
# ([cluster] link_user; TestUsers.add_link_user makes it).
LINK_PROGRAM = os.path.join(TOP_BUILDDIR, "link", "loginguard-link")
os.environ.setdefault("LOGINGUARD_LINK_PROGRAM", LINK_PROGRAM)
LINK_USER = "lgtestlink"


# Test users get uids from here up, and test daemons judge only uids from
# here up: a test run on a machine with real users never moves, limits or
# stops their processes (nor a benchmark's, which use uids 61000 and up).
TEST_UID_MIN = 2000000000


# How long a wait may last before the test is called hung.  It is never
# the assertion: a test that passes waits only as long as the daemon
# takes, and a busy machine can only make that longer.  How long things
# take is measured by `make bench`, which prints it.
HANG = 60

CTL = os.path.join(TOP_BUILDDIR, "tools", "loginguardctl")


def require_root():
    if os.geteuid() != 0:
        print("SKIP: integration tests need root (test users, every user's processes)")
        sys.exit(77)


def wait_for(condition, timeout, what, interval=0.1):
    """Poll condition() until it returns something true, at most timeout s."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


class TestUsers:
    """lgtest* accounts, removed again by remove_all() (and at start, in
    case an earlier run died)."""

    def __init__(self):
        self.names = []
        self.service_names = []
        self.remove_stale()

    @staticmethod
    def remove_stale():
        for entry in pwd.getpwall():
            if entry.pw_name.startswith("lgtest"):
                subprocess.run(["pkill", "-KILL", "-u", entry.pw_name], check=False)
                subprocess.run(["userdel", entry.pw_name], check=False,
                               stderr=subprocess.DEVNULL)

    def uids(self):
        uids = set()
        for name in self.names:
            try:
                uids.add(pwd.getpwnam(name).pw_uid)
            except KeyError:
                pass
        return uids

    def add(self, name, system=False, subuids=False, uid=None):
        """A test user: uid TEST_UID_MIN and up, or below 1000 with system,
        or the uid given; with subuids, a range of subordinate uids and gids
        of their own (which useradd gives where /etc/subuid exists, and
        usermod otherwise)."""
        assert name.startswith("lgtest")
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin"] +
                       (["--system"] if system else
                        ["--key", f"UID_MIN={TEST_UID_MIN}",
                         "--key", f"UID_MAX={TEST_UID_MIN + 99999}"]) +
                       (["--uid", str(uid)] if uid is not None else []) + [name],
                       check=True)
        self.names.append(name)
        if subuids and not subuid_range(name):
            first = 3000000000 + 65536 * len(self.names)
            ids = f"{first}-{first + 65535}"
            subprocess.run(["usermod", "--add-subuids", ids, "--add-subgids", ids, name],
                           check=True)
        return pwd.getpwnam(name)

    def add_link_user(self):
        """The cluster link's user: a system user, removed with the rest,
        but not one whose processes each test ends (the link runs as long
        as its daemon)."""
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        LINK_USER], check=True)
        self.service_names.append(LINK_USER)
        return pwd.getpwnam(LINK_USER)

    def remove_all(self):
        for name in self.names + self.service_names:
            subprocess.run(["userdel", name], check=False, stderr=subprocess.DEVNULL)
        self.names = []
        self.service_names = []


class Processes:
    """Processes this test started; ended by their pid, and only those."""

    def __init__(self):
        self.procs = []
        self.uids = set()

    def start(self, argv, user=None, tty=None, stdout=subprocess.DEVNULL, cwd="/"):
        """argv as user, in cwd; with tty (a terminal's path) that terminal
        is its controlling terminal and its standard input, output and
        error."""
        def become():
            os.setsid()
            if tty is not None:
                # A session leader opening a terminal gets it as its own.
                fd = os.open(tty, os.O_RDWR)
                for std in (0, 1, 2):
                    os.dup2(fd, std)
                os.close(fd)
            if user is not None:
                os.setgroups([])
                os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
                os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
        p = subprocess.Popen(argv, preexec_fn=become, stdin=subprocess.DEVNULL,
                             stdout=stdout, cwd=cwd)
        self.procs.append(p)
        if user is not None:
            self.uids.add(user.pw_uid)
        return p

    def stop_all(self):
        """Each started process leads its own process group (setsid), which
        holds what it started in turn (a shell loop's children): the whole
        group ends, and is gone, before the next test makes a user who may
        get the same uid."""
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        for p in self.procs:
            wait_for(lambda: not group_exists(p.pid), HANG, f"process group {p.pid} to end")
        self.procs = []


def processes_of(uids):
    """The pids of the live processes (not zombies) of these uids."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid in uids and alive(int(entry)):
                pids.append(int(entry))
        except FileNotFoundError:
            pass
    return pids


def assert_none_left(uids, what="a test"):
    """Nothing of a test outlives it into the next one (which may get the
    same uid, and shares the machine's cores): no process of these uids
    is left, once the ones it started and what the daemon started for
    them (a notice's child) have ended."""
    if uids:
        wait_for(lambda: not processes_of(uids), HANG,
                 f"the processes of uids {sorted(uids)} after {what} to end")


def group_exists(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


class Daemon:
    """loginguardd in the foreground on a private config in a temp dir."""

    def __init__(self, workdir, dropin, args=(), wrapper=(), start_timeout=HANG, env=None):
        self.workdir = workdir
        self.env = env  # the daemon's environment; None: this one's
        self.args = list(args)
        self.wrapper = list(wrapper)  # a command to run the daemon under (valgrind)
        self.start_timeout = start_timeout
        self.conf = os.path.join(workdir, "loginguard.conf")
        self.events_path = os.path.join(workdir, "events.jsonl")
        shutil.copy(SHIPPED_CONF, self.conf)
        os.makedirs(os.path.join(workdir, "conf.d"), exist_ok=True)
        self.write_dropin("00-test.conf", f"""
[daemon]
event_log = {self.events_path}
state_dir = {workdir}
control_socket = {workdir}/control.sock
rules_dirs = {SHIPPED_RULES}
[notify]
notices_dirs = {workdir}/notices, {SHIPPED_NOTICES}
# Slurm's clients may be on this machine: only a test of it asks Slurm.
slurm = no
""" + dropin)
        self.proc = None
        self.stderr = None
        self.stderr_path = os.path.join(workdir, "daemon.stderr")

    def write_dropin(self, name, text):
        with open(os.path.join(self.workdir, "conf.d", name), "w") as f:
            f.write(text)

    def start(self):
        if self.stderr:
            self.stderr.close()
        self.stderr = open(self.stderr_path, "a")
        started_before = len(self.find(event="daemon_started"))
        self.proc = subprocess.Popen(self.wrapper + [DAEMON, "--foreground", "--config", self.conf]
                                     + self.args, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=self.stderr,
                                     env=self.env)
        try:
            wait_for(lambda: len(self.find(event="daemon_started")) > started_before,
                     self.start_timeout, "daemon_started")
        except AssertionError as e:
            # What the daemon said is what tells why (a config error, a sanitizer report).
            self.stderr.flush()
            raise AssertionError(f"{e}; the daemon's stderr:\n{self.stderr_text()}") from None

    def stop(self, timeout=HANG):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=timeout)
        if self.stderr:
            self.stderr.close()
            self.stderr = None
        code = self.proc.returncode if self.proc else 0
        self.proc = None
        return code

    def events(self):
        try:
            with open(self.events_path) as f:
                return [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            return []

    def mark(self):
        """A place in the event log: wait_event(after=mark) sees only later events."""
        return len(self.events())

    def find(self, after=0, **match):
        return [e for e in self.events()[after:]
                if all(e.get(k) == v for k, v in match.items())]

    def wait_event(self, timeout, after=0, **match):
        return wait_for(lambda: self.find(after, **match), timeout, f"an event {match}")[0]

    def stderr_text(self):
        with open(self.stderr_path) as f:
            return f.read()

    def ctl(self, *args):
        """loginguardctl's output, run as root on this daemon's socket."""
        return subprocess.run([CTL, "--socket", f"{self.workdir}/control.sock", *args],
                              capture_output=True, text=True, timeout=HANG, check=True).stdout

    def samples(self):
        """How many samples the daemon has taken (its metrics' count)."""
        out = self.ctl("metrics")
        for line in out.splitlines():
            if line.startswith("loginguard_sample_duration_seconds_count "):
                return int(float(line.split()[1]))
        raise AssertionError("no loginguard_sample_duration_seconds_count in the metrics")

    def wait_samples(self, count):
        """Return once the daemon has taken count more samples: every
        process running now has been seen in as many samples."""
        first = self.samples()
        wait_for(lambda: self.samples() >= first + count, HANG, f"{count} samples")


def enforcing(parent, workdir, **keys):
    """The [daemon] keys of a test policy in enforce mode with the
    cgroupfs backend, below this test's own cgroup (cgroup_parent
    parent), judging test users only, on workdir's rules; keys add to
    them or override them (sample_interval="2s", say; None leaves a key
    out, at the shipped value)."""
    return dict({"mode": "enforce", "backend": "cgroupfs", "cgroup_parent": parent,
                 "sample_interval": "1s", "scan_interval": "5s", "min_uid": TEST_UID_MIN,
                 "stop_grace": "2s", "rules_dirs": f"{workdir}/rules.d"}, **keys)


def observing(parent=None, workdir=None, **keys):
    """The [daemon] keys of a test policy in observe mode (the shipped
    default: /proc sampling, nothing acted on), judging test users only,
    with cgroup_parent parent and workdir's rules (None: the shipped
    ones); keys as enforcing()'s."""
    return dict({"mode": "observe", "cgroup_parent": parent, "sample_interval": "1s",
                 "scan_interval": "5s", "min_uid": TEST_UID_MIN,
                 "rules_dirs": None if workdir is None else f"{workdir}/rules.d"}, **keys)


def violation(cpu, window=None, memory=0, memory_pressure=0):
    """The [violation] keys of a test policy: cpu in cores, window in
    seconds, memory a size ("150M") or 0 (off); memory pressure off
    unless given, as a busy machine's is no test's business.  None leaves
    a key at the shipped value."""
    return {"cpu": None if cpu is None else f"{cpu:g} cores",
            "memory": memory,
            "window": None if window is None else f"{window:g}s",
            "memory_pressure": memory_pressure}


def level(name=None, cpu=None, memory=None, stop=None, duration=None):
    """A level of a test policy's ladder: cpu in cores, memory a size or
    0 (none), stop True or False, duration a time ("10m"); a key left
    None is the shipped level's."""
    return {"name": name,
            "cpu": None if cpu is None else f"{cpu:g} cores",
            "memory": memory,
            "stop": None if stop is None else ("yes" if stop else "no"),
            "duration": duration}


def throttled(cores, duration="10m"):
    """Level 1 of the tests about a user throttled once: "throttled" at
    cores for 10 minutes, nothing stopped."""
    return level("throttled", cpu=cores, stop=False, duration=duration)


def throttle_policy(cpu, window, throttle):
    """[violation] on CPU alone (cpu cores over window seconds) and one
    level, "throttled" at throttle cores for 10 minutes: the sections of
    the tests about a user throttled once, for policy(daemon, **them)."""
    return {"violation": violation(cpu, window), "levels": [throttled(throttle)]}


def policy(daemon=None, **sections):
    """The text of a test daemon's drop-in (or of a config of its own):
    [daemon] with the keys daemon holds (enforcing(), observing()), then
    each section in the order given, a keyword its name and a dict its
    keys ([violation] violation(), [notify], [exempt], [classes],
    [share], [cluster]...); levels, a list of level()s, is the ladder,
    [level 1] on.  A key whose value is None is left out."""
    if daemon is not None:
        sections = dict(daemon=daemon, **sections)
    text = ""
    for name, keys in sections.items():
        if name == "levels":
            for n, rung in enumerate(keys, 1):
                text += section(f"level {n}", rung)
        else:
            text += section(name, keys)
    return text


def section(name, keys):
    return f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items() if v is not None)


def write_config(path, **sections):
    """A config file of policy(**sections)' text (for loginguardctl, say)."""
    with open(path, "w") as f:
        f.write(policy(**sections))
    return path


def write_rules(workdir, rules):
    """Rule objects as workdir/rules.d/test.rules (JSON lines)."""
    os.makedirs(f"{workdir}/rules.d", exist_ok=True)
    with open(f"{workdir}/rules.d/test.rules", "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rules))


def user_pty(case, user):
    """A terminal of user's own, as login would give them: its master
    (non-blocking, closed after case) and the path of its slave."""
    master, slave = pty.openpty()
    path = os.ttyname(slave)
    os.close(slave)
    os.chown(path, user.pw_uid, user.pw_gid)
    os.chmod(path, 0o620)
    os.set_blocking(master, False)
    case.addCleanup(os.close, master)
    return master, path


def read_terminal(master, until, timeout):
    """What the terminal shows once until (bytes) is on it."""
    text = b""
    def more():
        nonlocal text
        try:
            text += os.read(master, 65536)
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.EIO):
                raise
        return until in text
    wait_for(more, timeout, f"{until!r} on the terminal")
    # The daemon writes CR LF (a terminal in raw mode needs the CR), and
    # the pty adds its own CR; a terminal shows, and copies, neither.
    return text.decode("utf-8", "replace").replace("\r", "")


class Fixture:
    """What a test makes for itself and removes again: test users (users;
    none with users=False), a private work directory (workdir) and the
    name of a cgroup_parent below this test's own cgroup (parent), whose
    cgroups close() removes once a daemon has made them."""

    def __init__(self, name, users=True):
        self.users = TestUsers() if users else None
        self.workdir = make_workdir()
        self.parent = f"lgtest-{os.getpid()}-{name}"

    def close(self):
        try:
            remove_cgroups(self.parent)
        finally:
            if self.users:
                self.users.remove_all()
            if not os.environ.get("LG_KEEP"):
                shutil.rmtree(self.workdir, ignore_errors=True)

    @classmethod
    def of(cls, case, name=None, users=True):
        """A fixture for case: a test class (from setUpClass) or a test
        (from setUp), named for it unless name is given; its parts are
        case.users, case.workdir and case.parent, removed after it (a
        clean-up: after tearDownClass or tearDown, and after a set-up
        that failed)."""
        whole_class = isinstance(case, type)
        fixture = cls(name or (case.__name__ if whole_class else type(case).__name__).lower(),
                      users)
        (case.addClassCleanup if whole_class else case.addCleanup)(fixture.close)
        case.fixture = fixture
        if users:
            case.users = fixture.users
        case.workdir = fixture.workdir
        case.parent = fixture.parent
        return fixture


class DaemonTestCase(unittest.TestCase):
    """A class of tests sharing one daemon: test users, a private work
    directory holding the class's rules (workdir/rules.d/test.rules) and a
    cgroup_parent named for the class, below this test's own cgroup (a
    Fixture); all removed again afterwards.  A subclass gives policy()
    (the drop-in, for cls.workdir and cls.parent: policy()'s text), and
    may give daemon_rules() and prepare() (files the daemon needs before
    it starts); every test gets self.procs."""

    @classmethod
    def policy(cls):
        raise NotImplementedError

    @classmethod
    def daemon_rules(cls):
        return []

    @classmethod
    def prepare(cls):
        pass

    @classmethod
    def make_daemon(cls):
        return Daemon(cls.workdir, cls.policy())

    @classmethod
    def setUpClass(cls):
        Fixture.of(cls)
        write_rules(cls.workdir, cls.daemon_rules())
        cls.spin = private_copy(SPIN, cls.workdir, "spin")
        cls.prepare()
        cls.daemon = cls.make_daemon()
        # (Stopped before the fixture goes: clean-ups run last first.)
        cls.addClassCleanup(cls.daemon.stop)
        cls.daemon.start()

    def setUp(self):
        self.procs = Processes()

    def tearDown(self):
        self.procs.stop_all()
        assert_none_left(self.procs.uids | self.users.uids(), self.id())

    def assert_full_window(self, event, window, cpu=None):
        """A violation came after a whole window above the threshold, by
        the event's own figures (not by when the test saw it)."""
        usage = event["usage"]
        # (Less 50 ms: the engine's slack for wake-up jitter.)
        self.assertGreaterEqual(usage["window_s"], window - 0.05, event)
        if cpu is not None:
            # The event's figure is rounded (to 0.001): the engine's own,
            # above the threshold, may print as the threshold itself.
            self.assertGreaterEqual(usage["cpu_cores"], cpu, event)


class Account:
    """A uid (and gid) with no passwd entry, to run processes as."""

    def __init__(self, uid):
        self.pw_uid = self.pw_gid = uid
        self.pw_name = None


def user_processes(name):
    """The pids of name's processes."""
    uid = pwd.getpwnam(name).pw_uid
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    pids.append(int(entry))
            except FileNotFoundError:
                pass
    return pids


def uid_taken(uid):
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def subuid_range(name):
    """(first, count) of name's subordinate uids in /etc/subuid, or None."""
    try:
        with open("/etc/subuid") as f:
            for line in f:
                fields = line.strip().split(":")
                if len(fields) == 3 and fields[0] == name:
                    return int(fields[1]), int(fields[2])
    except FileNotFoundError:
        pass
    return None


def process_uid(pid, comm):
    """The real uid of pid while it runs under the name comm, else None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            fields = dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)
    except FileNotFoundError:
        return None
    return int(fields["Uid"].split()[0]) if fields.get("Name") == comm else None


def iso_to_epoch(text):
    """'2026-11-22T00:49:12.577Z' -> seconds since the epoch."""
    import datetime
    dt = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")
    return dt.replace(tzinfo=datetime.timezone.utc).timestamp()


def private_copy(src, directory, name):
    """A copy of a binary that test users may run (the build tree may not
    be readable to them)."""
    dst = os.path.join(directory, name)
    shutil.copy(src, dst)
    os.chmod(dst, 0o755)
    return dst


class TimedResult(unittest.TextTestResult):
    """Says how long each test took, in the log: what a slow suite spends
    its time on.  (A figure for people; no test asserts on it.)"""

    def startTest(self, test):
        self._started = time.monotonic()
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        self.stream.writeln(f"  ({time.monotonic() - self._started:.1f}s)")
        self.stream.flush()


class TimedRunner(unittest.TextTestRunner):
    resultclass = TimedResult


def take_lock():
    """One test run at a time on a node: runs share the lgtest* names (and
    remove each other's as stale).  Held until the returned file closes."""
    lock = open("/run/lock/loginguard-tests.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


def run_tests():
    """Run the module's tests; print the closing line CI reads."""
    require_root()
    lock = take_lock()
    # LG_TEST_MATCH: only the tests whose name matches it (a unittest -k
    # pattern): the plain build runs the valgrind classes alone, as the
    # sanitizer build runs everything else.
    match = os.environ.get("LG_TEST_MATCH")
    argv = sys.argv[:1] + (["-k", match] if match else [])
    result = unittest.main(argv=argv, exit=False, verbosity=2, testRunner=TimedRunner).result
    failed = len(result.failures) + len(result.errors)
    # A failed setUpClass is an error with no test run.
    print(f"{max(result.testsRun - failed, 0)} passed, {failed} failed")
    sys.exit(0 if failed == 0 else 1)


def make_workdir():
    d = tempfile.mkdtemp(prefix="lgtest.")
    os.chmod(d, 0o755)
    return d


V1_CONTROLLERS = ("cpu", "cpuacct", "memory", "pids")


def own_cgroup(controller):
    """This process's cgroup path in a v1 controller."""
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, names, path = line.rstrip("\n").split(":", 2)
            if controller in names.split(","):
                return path
    return None


def cgroup_dirs(parent):
    """The directories a relative cgroup_parent stands for, per controller
    (below this test's own cgroup, where the daemon it starts also is)."""
    dirs = {}
    for c in V1_CONTROLLERS:
        own = own_cgroup(c)
        if own is not None and os.path.isdir(f"/sys/fs/cgroup/{c}"):
            dirs[c] = os.path.normpath(f"/sys/fs/cgroup/{c}{own}/{parent}")
    return dirs


def remove_cgroups(parent):
    """Remove the per-user cgroups and the parent the daemon made (only
    those: they are below this test's own cgroup and named by the test)."""
    for d in cgroup_dirs(parent).values():
        if not os.path.isdir(d):
            continue
        for sub in os.listdir(d):
            path = os.path.join(d, sub)
            if sub.startswith("user-") and os.path.isdir(path):
                wait_for(lambda: not read(os.path.join(path, "cgroup.procs")).strip(),
                         HANG, f"{path} to empty")
                os.rmdir(path)
        os.rmdir(d)


def favour_cpu(parent):
    """Ten sessions' CPU weight for a daemon's cgroup_parent (it makes the
    parent at its start and never sets a weight there): a test's hog, once
    the daemon has moved it into its user's cgroup below, gets above the
    threshold however many other sessions keep the cores busy (each
    session gets one weight: autogroup).  Nothing is judged by this share;
    the tests judge the daemon's own figures."""
    with open(os.path.join(cgroup_dirs(parent)["cpu"], "cpu.shares"), "w") as f:
        f.write("10240")


def cpu_stat(cpu_dir):
    """A v1 cpu cgroup's cpu.stat: nr_periods, nr_throttled, throttled_time."""
    return {k: int(v) for k, v in (line.split() for line in read(f"{cpu_dir}/cpu.stat")
                                   .splitlines())}


def cpu_quota(cpu_dir):
    """The cgroup's CPU limit in cores (cpu.cfs_quota_us over the period);
    None: no limit."""
    quota = int(read(f"{cpu_dir}/cpu.cfs_quota_us"))
    return None if quota < 0 else quota / int(read(f"{cpu_dir}/cpu.cfs_period_us"))


def wait_throttled(cpu_dir, periods=3):
    """Return once the kernel has throttled the cgroup in `periods` more
    periods: its limit is in force and what runs in it wants more."""
    first = cpu_stat(cpu_dir)["nr_throttled"]
    wait_for(lambda: cpu_stat(cpu_dir)["nr_throttled"] >= first + periods, HANG,
             f"{cpu_dir} to be throttled")


def assert_not_throttled(test, cpu_dir, periods=10):
    """The kernel throttles the cgroup in none of `periods` periods (after
    two to let a period begun under an older limit end): what runs in it
    wants less than its limit."""
    first = cpu_stat(cpu_dir)["nr_periods"]
    wait_for(lambda: cpu_stat(cpu_dir)["nr_periods"] >= first + 2, HANG, f"{cpu_dir} to run")
    before = cpu_stat(cpu_dir)
    wait_for(lambda: cpu_stat(cpu_dir)["nr_periods"] >= before["nr_periods"] + periods, HANG,
             f"{periods} periods of {cpu_dir}")
    test.assertEqual(cpu_stat(cpu_dir)["nr_throttled"], before["nr_throttled"],
                     f"{cpu_dir} was throttled")


def rss_bytes(pid):
    """A process's resident memory (VmRSS), 0 if it has none or is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except FileNotFoundError:
        pass
    return 0


def read(path):
    with open(path) as f:
        return f.read()


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
