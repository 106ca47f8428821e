"""Hostile users hiding their usage, each trick done for real by a real
test user against the real daemon (enforce mode, cgroupfs backend on this
machine's cgroups, below the test run's own cgroup):

- code loaded into an exempt program (LD_PRELOAD) still counts;
- a private mount namespace cannot make a busy loop pass as an exempt
  program (a bind mount over its path);
- a process that leaves its user's cgroup through a delegated subtree is
  counted where it is and put back;
- a rootless container's subordinate uids count for their owner;
- processes that live less than a sample count, whether their parent
  reaps them or they are orphaned (observe mode, /proc sampling), and
  however many places in the daemon's exit-record table another user
  holds;
- memory written into a process that never runs again counts (observe
  mode, /proc sampling);
- a file in /dev/shm counts for the user who wrote it after every
  process of theirs has ended, and keeps their cgroup; so does a memfd
  that no process maps (and, in observe mode on /proc, one that only a
  descriptor holds, once however many descriptors hold it)."""

import json
import os
import select
import subprocess
import signal

import lgtest
from lgtest import wait_for

SAMPLE = 0.5
WINDOW = 2.0
SCAN = 2.0
CPU = 0.5        # cores, the violation threshold (spin 2 gets twice that on a busy node)
THROTTLE = 0.25  # cores, level 1: below what any hog here wants
HANG = lgtest.HANG
FLAG_TIMEOUT = WINDOW + HANG
HELPERS = os.path.join(lgtest.TOP_BUILDDIR, "tests", "helpers")


def policy(parent, workdir):
    return lgtest.policy(lgtest.enforcing(parent, workdir, sample_interval=f"{SAMPLE:g}s",
                                          scan_interval=f"{SCAN:g}s"),
                         classes={"exempt_cpu": "0.1 cores"},
                         violation=lgtest.violation(CPU, WINDOW),
                         levels=[lgtest.level("throttled", cpu=THROTTLE, memory=0, stop=False,
                                              duration="1m")],
                         notify={"channels": ""})


def delegated_cgroup(name, user):
    """A cgroup below this test's own, in each v1 controller, that `user`
    may move its processes into: a subtree delegated to them."""
    dirs = []
    for c in lgtest.V1_CONTROLLERS:
        own = lgtest.own_cgroup(c)
        if own is None or not os.path.isdir(f"/sys/fs/cgroup/{c}"):
            continue
        path = os.path.normpath(f"/sys/fs/cgroup/{c}{own}/{name}")
        os.makedirs(path, exist_ok=True)
        for f in (path, f"{path}/cgroup.procs", f"{path}/tasks"):
            os.chown(f, user.pw_uid, user.pw_gid)
        dirs.append(path)
    return dirs


def remove_cgroup_dirs(dirs):
    for d in dirs:
        if os.path.isdir(d):
            wait_for(lambda: not lgtest.read(f"{d}/cgroup.procs").strip(), HANG,
                     f"{d} to empty")
            os.rmdir(d)


class Evasion(lgtest.DaemonTestCase):
    @classmethod
    def policy(cls):
        return policy(cls.parent, cls.workdir)

    @classmethod
    def daemon_rules(cls):
        return [{"name": "test-exempt-sleep", "class": "exempt",
                 "exe": f"{cls.workdir}/exempt-sleep"},
                {"name": "test-exempt-prog", "class": "exempt",
                 "exe": f"{cls.workdir}/exempt-prog"}]

    @classmethod
    def prepare(cls):
        lgtest.private_copy("/usr/bin/sleep", cls.workdir, "exempt-sleep")
        lgtest.private_copy("/usr/bin/sleep", cls.workdir, "exempt-prog")
        cls.libspin = lgtest.private_copy(os.path.join(HELPERS, ".libs", "libspin.so"),
                                          cls.workdir, "libspin.so")

    def user_dir(self, controller, uid):
        return os.path.join(lgtest.cgroup_dirs(self.parent)[controller], f"user-{uid}")

    def user_cgroup_procs(self, uid):
        path = os.path.join(self.user_dir("cpuacct", uid), "cgroup.procs")
        return lgtest.read(path).split() if os.path.exists(path) else []

    def why(self, pid):
        out = subprocess.run([lgtest.CTL, "--socket", f"{self.workdir}/control.sock", "--json",
                              "why", str(pid)], capture_output=True, text=True, timeout=HANG,
                             check=True).stdout
        return json.loads(out)["why"]

    def assert_foreign_code(self, event, proc, reason):
        """The violation names the process as class none, and why says why."""
        top = event["processes"][0]
        self.assertEqual(top["pid"], proc.pid)
        self.assertEqual(top["class"], "none")
        why = self.why(proc.pid)
        self.assertEqual(why["process"]["class"], "none")
        self.assertEqual(why["process"]["foreign_code"], reason)
        self.assertTrue(any(f"does not run only its own code ({reason})" in line
                            for line in why["text"]), why["text"])

    def test_code_loaded_into_an_exempt_program_counts(self):
        user = self.users.add("lgtest11")
        proc = self.procs.start(["env", f"LD_PRELOAD={self.libspin}", "LGSPIN_THREADS=2",
                                 f"{self.workdir}/exempt-sleep", "600"], user)
        event = self.daemon.wait_event(FLAG_TIMEOUT, event="violation", uid=user.pw_uid)
        # It does not run only its own code: no exempt class, no allowance.
        self.assert_full_window(event, WINDOW, CPU)
        self.assert_foreign_code(event, proc, "LD_PRELOAD in its environment")
        # Limited with its user (it is in the user's cgroup), never stopped:
        # the kernel holds it at the level's limit.
        self.daemon.wait_event(HANG, event="limits_set", uid=user.pw_uid, level=1)
        self.assertIn(str(proc.pid), self.user_cgroup_procs(user.pw_uid))
        cpu = self.user_dir("cpu", user.pw_uid)
        self.assertEqual(lgtest.cpu_quota(cpu), THROTTLE)
        lgtest.wait_throttled(cpu)
        self.assertEqual(self.daemon.find(event="process_stopping", uid=user.pw_uid), [])
        self.assertTrue(lgtest.alive(proc.pid))

    def test_code_that_covers_its_tracks_is_known_by_its_file(self):
        """The library is the user's own and renames LD_PRELOAD in its
        environment once loaded: its mapping still gives it away."""
        user = self.users.add("lgtest27")
        lib = lgtest.private_copy(self.libspin, self.workdir, "lgtest27-spin.so")
        os.chown(lib, user.pw_uid, user.pw_gid)
        proc = self.procs.start(["env", f"LD_PRELOAD={lib}", "LGSPIN_THREADS=2", "LGSPIN_SCRUB=1",
                                 f"{self.workdir}/exempt-sleep", "600"], user)
        event = self.daemon.wait_event(FLAG_TIMEOUT, event="violation", uid=user.pw_uid)
        self.assert_full_window(event, WINDOW, CPU)
        self.assert_foreign_code(event, proc, f"code from {lib} (owner uid {user.pw_uid}, mode "
                                 "755), which not only root can change")

    def test_a_private_mount_namespace_cannot_make_a_program_exempt(self):
        user = self.users.add("lgtest12")
        exempt = f"{self.workdir}/exempt-prog"
        # In the user's own mount namespace the busy loop sits at the exempt
        # program's path: /proc/PID/exe reads that path.
        proc = self.procs.start(["unshare", "-Urm", "sh", "-c",
                                 f"mount --bind {self.spin} {exempt} && exec {exempt} 2"],
                                user)
        event = self.daemon.wait_event(FLAG_TIMEOUT, event="violation", uid=user.pw_uid)
        self.assert_full_window(event, WINDOW, CPU)
        top = event["processes"][0]
        self.assertEqual(top["pid"], proc.pid)
        self.assertEqual(top["exe"], exempt)
        self.assertEqual(top["class"], "none")

    def test_a_process_that_leaves_its_cgroup_is_put_back(self):
        user = self.users.add("lgtest13")
        dirs = delegated_cgroup(f"lgtest-deleg-{os.getpid()}-13", user)
        try:
            hog = self.procs.start([self.spin, "1", "0.1"], user)
            wait_for(lambda: str(hog.pid) in self.user_cgroup_procs(user.pw_uid), HANG,
                     "the process in its user's cgroup")
            # The user moves it into the subtree delegated to them: the
            # kernel took every move when the shell succeeds (set -e; a
            # check of the user's cgroup afterwards could come after the
            # daemon put it back).
            moves = "set -e; " + "; ".join(f"echo {hog.pid} > {d}/cgroup.procs" for d in dirs)
            self.assertEqual(self.procs.start(["sh", "-c", moves], user).wait(HANG), 0)
            wait_for(lambda: str(hog.pid) in self.user_cgroup_procs(user.pw_uid), HANG,
                     "the process put back in its user's cgroup")
        finally:
            self.procs.stop_all()
            remove_cgroup_dirs(dirs)

    def test_a_process_that_keeps_leaving_its_cgroup_still_counts(self):
        user = self.users.add("lgtest14")
        dirs = delegated_cgroup(f"lgtest-deleg-{os.getpid()}-14", user)
        try:
            hog = self.procs.start([self.spin, "2"], user)
            moves = "; ".join(f"echo {hog.pid} > {d}/cgroup.procs" for d in dirs)
            # Two busy threads that step out of the user's cgroup every
            # 100 ms, whatever puts them back.
            self.procs.start(["sh", "-c", f"while kill -0 {hog.pid}; do {moves}; sleep 0.1; done"],
                             user)
            event = self.daemon.wait_event(FLAG_TIMEOUT + SCAN, event="violation",
                                           uid=user.pw_uid)
            self.assert_full_window(event, WINDOW, CPU)
        finally:
            self.procs.stop_all()
            remove_cgroup_dirs(dirs)

    def test_a_rootless_container_counts_for_its_owner(self):
        mark = self.daemon.mark()
        user = self.users.add("lgtest15", subuids=True)
        first, count = lgtest.subuid_range(user.pw_name)
        # The daemon reads /etc/subuid again when it changes (at a sweep).
        self.daemon.wait_event(SCAN + HANG, after=mark, event="subuids_loaded")
        # uid 1 inside the user namespace is the first subordinate uid.
        proc = self.procs.start(["unshare", "--user", "--map-auto", "--map-root-user", "--",
                                 "setpriv", "--reuid=1", "--regid=1", "--clear-groups", "--",
                                 self.spin, "2"], user)
        wait_for(lambda: lgtest.process_uid(proc.pid, "spin") == first, HANG,
                 "the busy loop under the first subordinate uid")
        event = self.daemon.wait_event(FLAG_TIMEOUT + SCAN, event="violation", uid=user.pw_uid)
        self.assertEqual(event["user"], user.pw_name)
        self.assert_full_window(event, WINDOW, CPU)
        # The busy loop is the only process: had the subordinate uid been
        # judged on its own, its violation would have come in the owner's
        # sample, whose events are all written once one more sample is.
        self.daemon.wait_samples(1)
        self.assertEqual(self.daemon.find(uid=first, event="violation"), [])


class ShortLived(lgtest.DaemonTestCase):
    """/proc sampling (observe mode on a node without per-user cgroups: the
    shipped default), at the shipped 2 s interval: each busy process lives
    0.3 s, so a sample sees little of it alive, and what it used counts
    only if the daemon counts what ended between samples.  (Hence 2 s,
    not the 0.5 s of the other tests: samples that close together would
    see much of each process alive.)"""
    interval = 2.0
    window = interval  # one whole interval above the threshold

    @classmethod
    def policy(cls):
        return lgtest.policy(lgtest.observing(sample_interval=f"{cls.interval:g}s",
                                              scan_interval="30s"),
                             violation=lgtest.violation(CPU, cls.window))

    @classmethod
    def prepare(cls):
        cls.reaper = lgtest.private_copy(os.path.join(HELPERS, "reaper"), cls.workdir, "reaper")

    def busy_loops(self, user, orphaned):
        """Two loops of 0.3 s busy processes: a core each when the machine
        has one for each (twice the threshold between them when something
        else takes a core).  Orphans are reaped at once, as init does on a
        login node (this test host's init leaves them as zombies for a
        while).  The shell's stderr goes nowhere: it says "Alarm clock" as
        each ends."""
        one = f"{self.spin} 1 1 0.3"
        step = f"({one} &); sleep 0.3" if orphaned else one
        for _ in range(2):
            self.procs.start([self.reaper, "sh", "-c",
                              f"exec 2>/dev/null; while :; do {step}; done"], user)

    def flagged(self, user):
        event = self.daemon.wait_event(self.window + HANG, event="violation", uid=user.pw_uid)
        self.assert_full_window(event, self.window, CPU)

    def test_processes_reaped_by_their_parent_count(self):
        user = self.users.add("lgtest16")
        self.busy_loops(user, orphaned=False)
        self.flagged(user)

    def test_orphaned_processes_count(self):
        user = self.users.add("lgtest17")
        self.busy_loops(user, orphaned=True)
        self.flagged(user)


class FullTaskstatsTable(lgtest.DaemonTestCase):
    """One user parks 8,300 processes that each had a thread end: each
    holds a place in the daemon's table of thread groups in flight (8,192
    for the node) while it lives.  Another user's stream of short-lived
    eight-thread processes must still count whole: one user holds at most
    1,024 places, and a thread that finds none is counted on its own."""
    interval = ShortLived.interval
    window = ShortLived.window
    PARKED = 8300
    policy = ShortLived.__dict__["policy"]
    prepare = ShortLived.__dict__["prepare"]
    flagged = ShortLived.flagged

    def test_a_full_table_hides_no_one_s_short_lived_processes(self):
        parker = self.users.add("lgtest28")
        threadpark = os.path.join(HELPERS, "threadpark")
        park = self.procs.start([threadpark, str(self.PARKED)], parker)
        try:
            wait_for(lambda: len(lgtest.processes_of({parker.pw_uid})) > self.PARKED, HANG,
                     "the parked processes")
            user = self.users.add("lgtest29")
            one = f"{self.spin} 8 1 0.15"
            self.procs.start([self.reaper, "sh", "-c",
                              f"exec 2>/dev/null; while :; do {one}; done"], user)
            self.flagged(user)
        finally:
            park.send_signal(signal.SIGTERM)
            park.wait(HANG)


class SleepingMemory(lgtest.DaemonTestCase):
    """/proc sampling (observe mode, no per-user cgroups), which reads a
    process's stat only when its run time moved: a child that sleeps while
    its parent fills its memory with process_vm_writev must still count."""
    MB = 300

    @classmethod
    def policy(cls):
        return lgtest.policy(lgtest.observing(sample_interval=f"{SAMPLE:g}s",
                                              scan_interval=f"{SCAN:g}s"),
                             violation=lgtest.violation(0, WINDOW, memory="200M"))

    @classmethod
    def prepare(cls):
        cls.remotefill = lgtest.private_copy(os.path.join(HELPERS, "remotefill"), cls.workdir,
                                             "remotefill")

    def test_memory_written_into_a_sleeping_process_counts(self):
        user = self.users.add("lgtest18")
        parent = self.procs.start([self.remotefill, str(self.MB)], user)
        children = f"/proc/{parent.pid}/task/{parent.pid}/children"
        child = int(wait_for(lambda: lgtest.read(children).split(), HANG, "the child")[0])
        # The daemon has read the child, asleep with nothing in its memory...
        self.daemon.wait_samples(3)
        self.assertEqual(self.daemon.find(event="violation", uid=user.pw_uid), [])
        # ...which its parent now fills, while its run time stands still.
        os.kill(parent.pid, signal.SIGUSR1)
        wait_for(lambda: lgtest.rss_bytes(child) >= self.MB << 20, HANG, "the child filled")
        event = self.daemon.wait_event(SCAN + WINDOW + HANG, event="violation", uid=user.pw_uid)
        self.assertEqual(event["reason"], "memory")
        self.assertEqual(event["processes"][0]["pid"], child)
        self.assertGreaterEqual(event["processes"][0]["rss_bytes"], self.MB << 20)


def assert_shm_file_counts(test, user, first=""):
    """test.MB MiB written by user into a file in /dev/shm (after the
    shell command first), the writer ended: a memory violation for user."""
    path = f"/dev/shm/{user.pw_name}-{os.getpid()}"
    test.addCleanup(lambda: os.path.exists(path) and os.unlink(path))
    writer = test.procs.start(["/bin/sh", "-c", f"{first}head -c {test.MB}M /dev/zero > {path}"],
                              user)
    test.assertEqual(writer.wait(HANG), 0)
    test.assertEqual(lgtest.processes_of({user.pw_uid}), [])
    event = test.daemon.wait_event(SCAN + WINDOW + HANG, event="violation", uid=user.pw_uid)
    test.assertEqual(event["reason"], "memory")
    test.assertGreaterEqual(event["usage"]["memory_bytes"], test.MB << 20)


class SharedMemory(lgtest.DaemonTestCase):
    """Memory in a tmpfs file is charged to the cgroup of whoever wrote
    it, and stays after they log out: it counts for them (enforce mode,
    per-user cgroups), and their cgroup is not removed while it holds it
    (its charge would go to the parent, out of their share)."""
    MB = 300

    @classmethod
    def policy(cls):
        return lgtest.policy(lgtest.enforcing(cls.parent, cls.workdir,
                                              sample_interval=f"{SAMPLE:g}s",
                                              scan_interval=f"{SCAN:g}s"),
                             violation=lgtest.violation(0, WINDOW, memory="200M"),
                             notify={"channels": ""})

    def test_a_file_in_dev_shm_counts_after_its_writer_ended(self):
        user = self.users.add("lgtest19")
        # Written once the shell is in its user's cgroup (the daemon moves
        # it there when it first sees it), so the charge is the user's.
        assert_shm_file_counts(self, user, "until grep -q \"user-$(id -u)\" /proc/self/cgroup; "
                               "do sleep 0.1; done; ")
        # Sweeps since: the cgroup that holds the file's charge is still there.
        self.daemon.wait_samples(int(2 * SCAN / SAMPLE) + 2)
        memory = os.path.join(lgtest.cgroup_dirs(self.parent)["memory"], f"user-{user.pw_uid}")
        self.assertTrue(os.path.isdir(memory))

    def test_a_memfd_no_process_maps_counts(self):
        user = self.users.add("lgtest20")
        # 300 MiB written into a memfd and held by its descriptor, never
        # mapped: in no process's resident size.
        code = ("import os, time\n"
                "while f'user-{os.getuid()}' not in open('/proc/self/cgroup').read():\n"
                "    time.sleep(0.1)\n"
                "fd = os.memfd_create('hidden')\n"
                "block = b'x' * (1 << 20)\n"
                f"for _ in range({self.MB}):\n"
                "    os.write(fd, block)\n"
                "time.sleep(600)\n")
        proc = self.procs.start(["/usr/bin/python3", "-c", code], user)
        event = self.daemon.wait_event(SCAN + WINDOW + HANG, event="violation",
                                       uid=user.pw_uid)
        self.assertEqual(event["reason"], "memory")
        self.assertGreaterEqual(event["usage"]["memory_bytes"], self.MB << 20)
        self.assertLess(lgtest.rss_bytes(proc.pid), 100 << 20)


# A System V segment of MB MiB made, filled and left by its creator, who
# then names another user as its owner (IPC_SET: allowed to a creator).
SEGMENT = """
import ctypes, os, pwd, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
size = int(sys.argv[1]) << 20
shmid = libc.shmget(0, ctypes.c_size_t(size), 0o1600)  # IPC_PRIVATE, IPC_CREAT, 0600
assert shmid >= 0, ctypes.get_errno()
addr = libc.shmat(shmid, None, 0)
ctypes.memset(addr, 1, size)
libc.shmdt(ctypes.c_void_p(addr))
# struct shmid64_ds on x86_64: ipc64_perm (key, uid, gid, cuid, cgid, mode ...)
# first; IPC_STAT = 2, IPC_SET = 1.
buf = (ctypes.c_uint32 * 64)()
assert libc.shmctl(shmid, 2, buf) == 0, ctypes.get_errno()
buf[1] = pwd.getpwnam(sys.argv[2]).pw_uid
assert libc.shmctl(shmid, 1, buf) == 0, ctypes.get_errno()
print(shmid, flush=True)
"""


# A memfd of MB MiB filled through a mapping that is then unmapped
# ("unmapped": only the descriptor holds it), or kept ("shared": a child
# holds the descriptor too, and the parent a second one), then "ready".
MEMFD = """
import mmap, os, sys, time
size = int(sys.argv[1]) << 20
fd = os.memfd_create("hidden")
os.ftruncate(fd, size)
m = mmap.mmap(fd, size)
block = b"x" * (1 << 20)
for at in range(0, size, 1 << 20):
    m[at:at + (1 << 20)] = block
if sys.argv[2] == "unmapped":
    m.close()
elif os.fork() == 0:
    m.close()
    time.sleep(600)
    os._exit(0)
else:
    second = os.dup(fd)
print("ready", flush=True)
time.sleep(600)
"""


class SharedMemoryObserved(lgtest.DaemonTestCase):
    """/proc sampling (observe mode) sees no cgroup's shmem: what a user
    holds in tmpfs files and System V segments, which no process's
    resident size shows once it is unmapped, counts for them all the
    same (issue 19); a segment for its creator, whoever it names; and a
    memfd that only a descriptor holds, once, for whoever holds it."""
    MB = 300

    @classmethod
    def policy(cls):
        return SleepingMemory.policy()

    def test_a_file_in_dev_shm_counts_after_its_writer_ended(self):
        assert_shm_file_counts(self, self.users.add("lgtest45"))

    def test_a_segment_counts_for_its_creator_not_for_whom_it_names(self):
        creator = self.users.add("lgtest46")
        named = self.users.add("lgtest47")
        maker = self.procs.start(["/usr/bin/python3", "-c", SEGMENT, str(self.MB),
                                  named.pw_name], creator, stdout=subprocess.PIPE)
        out, _ = maker.communicate(timeout=HANG)
        self.assertEqual(maker.returncode, 0)
        shmid = int(out.split()[0])
        self.addCleanup(subprocess.run, ["ipcrm", "-m", str(shmid)], check=False)
        event = self.daemon.wait_event(SCAN + WINDOW + HANG, event="violation",
                                       uid=creator.pw_uid)
        self.assertEqual(event["reason"], "memory")
        self.assertGreaterEqual(event["usage"]["memory_bytes"], self.MB << 20)
        self.assertEqual(self.daemon.find(event="violation", uid=named.pw_uid), [])

    def start_memfd(self, user, mb, mode):
        proc = self.procs.start(["/usr/bin/python3", "-c", MEMFD, str(mb), mode], user,
                                stdout=subprocess.PIPE)
        self.addCleanup(proc.stdout.close)
        wait_for(lambda: select.select([proc.stdout], [], [], 0)[0], HANG, "the memfd filled")
        self.assertEqual(proc.stdout.readline(), b"ready\n")
        return proc

    def test_a_memfd_only_a_descriptor_holds_counts(self):
        user = self.users.add("lgtest48")
        mb = 600
        proc = self.start_memfd(user, mb, "unmapped")
        # In no resident size, in no file of any tmpfs.
        self.assertLess(lgtest.rss_bytes(proc.pid), 100 << 20)
        event = self.daemon.wait_event(SCAN + WINDOW + HANG, event="violation", uid=user.pw_uid)
        self.assertEqual(event["reason"], "memory")
        # In full once a sweep's walk over descriptors has been through
        # it (the violation may come first, on what the filling mapped).
        wait_for(lambda: self.user_memory(user) >= mb << 20, SCAN + HANG,
                 "the memfd counted in full")

    def user_memory(self, user):
        """The user's memory as the daemon counts it now."""
        out = self.daemon.ctl("--json", "user", str(user.pw_uid))
        return json.loads(out)["user"]["memory_bytes"]

    def test_a_memfd_held_twice_and_mapped_counts_once(self):
        user = self.users.add("lgtest49")
        self.start_memfd(user, self.MB, "shared")
        event = self.daemon.wait_event(SCAN + WINDOW + HANG, event="violation", uid=user.pw_uid)
        self.assertEqual(event["reason"], "memory")
        # Two sweeps on, the walks over descriptors have been through it:
        # the mapping's resident size and two interpreters count, not the
        # memfd again for each of its three descriptors.
        self.daemon.wait_samples(int(2 * SCAN / SAMPLE) + 2)
        memory = self.user_memory(user)
        self.assertGreaterEqual(memory, self.MB << 20)
        self.assertLess(memory, (self.MB << 20) * 3 // 2)


if __name__ == "__main__":
    lgtest.run_tests()
