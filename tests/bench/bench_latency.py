"""make bench: how soon the daemon acts, the figures the tests no longer
assert (a test must pass on a busy machine; these say how the code does
on this one).  Each figure is measured LG_BENCH_LATENCY_RUNS times (5)
and printed as minimum, median and maximum, with the machine's load
average beside it:

  1. a sustained 2-core hog's start to its violation (observe mode, the
     tests' policy: samples every 0.5 s, a 3 s window), and what that is
     beyond the window;
  2. the same for a load split over eight processes (0.3 of a core each);
  3. a forbidden program's exec to its stop (enforce mode, samples every
     2 s as shipped: the exec is judged when the connector reports it),
     over 4 x LG_BENCH_LATENCY_RUNS runs a second apart, then as many
     back to back (where the bound on early samples, four a second after
     a burst of four, sets the pace);
  4. loginguardctl forgive's return to the share back on the user's
     cgroup (cpu.cfs_quota_us), and to the limits_set event;
  5. an event's time to its line on `loginguardctl events --follow`;
  6. pam_loginguard against a daemon that accepts and never answers
     (timeout=500ms, fail=open): how long the login waits beyond its
     timeout, and its round trip to the real daemon.

Real daemon, real test users (lgtest*, removed again), real cgroups below
this run's own; exits 77 without root."""

import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import lgtest  # noqa: E402
import pamenv  # noqa: E402

RUNS = int(os.environ.get("LG_BENCH_LATENCY_RUNS", "5"))
SAMPLE = 0.5
WINDOW = 3.0
CPU = 0.5
THROTTLE = 0.25


def policy(parent, workdir, mode, sample):
    return lgtest.policy(lgtest.enforcing(parent, workdir, sample_interval=f"{sample:g}s",
                                          mode=mode),
                         **lgtest.throttle_policy(CPU, WINDOW, THROTTLE))


def figure(name, values, unit="s", scale=1.0):
    v = [x * scale for x in values]
    load = os.getloadavg()[0]
    print(f"  {name:58s} min {min(v):7.3f}  median {statistics.median(v):7.3f}  "
          f"max {max(v):7.3f} {unit}  (n={len(v)}, load {load:.2f})", flush=True)


class Bench:
    def __init__(self, mode, sample=SAMPLE):
        self.fixture = lgtest.Fixture(f"bench-{mode}")
        self.users, self.workdir = self.fixture.users, self.fixture.workdir
        self.parent = self.fixture.parent
        self.procs = lgtest.Processes()
        lgtest.write_rules(self.workdir, [{"name": "bench-miner", "class": "forbidden",
                                           "comm": "lgminer"}])
        self.spin = lgtest.private_copy(lgtest.SPIN, self.workdir, "spin")
        self.miner = lgtest.private_copy(lgtest.SPIN, self.workdir, "lgminer")
        self.daemon = lgtest.Daemon(self.workdir, policy(self.parent, self.workdir, mode, sample))
        self.daemon.start()

    def close(self):
        self.procs.stop_all()
        self.daemon.stop()
        self.fixture.close()

    def user(self, n):
        return self.users.add(f"lgtestb{n}")

    def until_event(self, start_argvs, user, event, **match):
        """Seconds from the processes' start to the event about user."""
        mark = self.daemon.mark()
        started = time.time()
        for argv in start_argvs:
            self.procs.start(argv, user)
        e = self.daemon.wait_event(lgtest.HANG, after=mark, event=event, uid=user.pw_uid, **match)
        took = lgtest.iso_to_epoch(e["time"]) - started
        self.procs.stop_all()
        lgtest.assert_none_left({user.pw_uid})
        return took


def detection(runs):
    print("\n== 1, 2. detection: a hog's start to its violation (observe mode, "
          f"sample {SAMPLE:g} s, window {WINDOW:g} s, {CPU:g} cores)")
    b = Bench("observe")
    try:
        hog, split = [], []
        for i in range(runs):
            hog.append(b.until_event([[b.spin, "2"]], b.user(f"h{i}"), "violation"))
            split.append(b.until_event([[b.spin, "1", "0.3"]] * 8, b.user(f"s{i}"),
                                       "violation"))
        figure("sustained 2-core hog", hog)
        figure("  beyond the window", [x - WINDOW for x in hog])
        figure("eight processes at 0.3 cores", split)
        figure("  beyond the window", [x - WINDOW for x in split])
    finally:
        b.close()


def node_forks():
    with open("/proc/stat") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("processes "))


def daemon_cpu_under(b, argv, user, seconds=10):
    """The daemon's CPU (cores) and the node's forks a second while argv
    runs as user."""
    def cpu():
        with open(f"/proc/{b.daemon.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    b.procs.start(argv, user)
    time.sleep(1)  # the stream under way: a figure's setting, not a wait for anything
    c, forks, t = cpu(), node_forks(), time.time()
    time.sleep(seconds)
    took = time.time() - t
    used, rate = (cpu() - c) / took, (node_forks() - forks) / took
    b.procs.stop_all()
    lgtest.assert_none_left({user.pw_uid})
    return used, rate


def exec_streams(b):
    """What a user's stream of execs costs the daemon: the connector's
    news read as they come (at most every 5 ms, every 100 ms once a read
    finds 64 or more), and forbidden ones bringing samples forward (at
    most four a second after a burst of four)."""
    for name, loop in (("/bin/true, as fast as a shell loop goes", "/bin/true"),
                       ("the forbidden program, back to back", f"{b.miner} 1 0.05")):
        shell_loop = f"exec 2>/dev/null; while :; do {loop}; done"
        used, rate = daemon_cpu_under(b, ["sh", "-c", shell_loop], b.user("x" + str(len(name))))
        print(f"  daemon CPU while a user execs {name}: {100 * used:.2f} % of a core "
              f"({rate:.0f} forks/s on the node)", flush=True)


def enforce(runs):
    print("\n== 3, 4. enforce mode")
    b = Bench("enforce", sample=2.0)
    try:
        # One exec at a time: each a second after the last was stopped,
        # as a user would start a program again.
        stops = []
        for i in range(4 * runs):
            time.sleep(1.0)  # the scenario's spacing, not a wait for anything
            stops.append(b.until_event([[b.miner, "1", "0.05"]], b.user(f"f{i}"),
                                       "process_stopping"))
        figure("a forbidden program's exec to its SIGTERM (2 s samples)", stops, "ms", 1000)
        # Back to back, each as soon as the last is stopped: past the first
        # few, at the bound on early samples (four a second).
        stream = [b.until_event([[b.miner, "1", "0.05"]], b.user(f"g{i}"), "process_stopping")
                  for i in range(4 * runs)]
        figure("  the same, back to back (early samples' bound)", stream, "ms", 1000)
        exec_streams(b)
    finally:
        b.close()
    b = Bench("enforce")
    try:
        to_quota, to_event = [], []
        ctl = ["--socket", f"{b.workdir}/control.sock"]
        for i in range(runs):
            user = b.user(f"g{i}")
            b.procs.start([b.spin, "2"], user)
            b.daemon.wait_event(lgtest.HANG, event="limits_set", uid=user.pw_uid, level=1)
            quota = os.path.join(lgtest.cgroup_dirs(b.parent)["cpu"], f"user-{user.pw_uid}")
            mark = b.daemon.mark()
            subprocess.run([lgtest.CTL] + ctl + ["forgive", user.pw_name, "--reason", "bench"],
                           check=True, capture_output=True, timeout=lgtest.HANG)
            done = time.time()
            lgtest.wait_for(lambda: lgtest.cpu_quota(quota) != THROTTLE, lgtest.HANG,
                            "the share back", interval=0.001)
            to_quota.append(time.time() - done)
            e = b.daemon.wait_event(lgtest.HANG, after=mark, event="limits_set",
                                    uid=user.pw_uid, level=0)
            to_event.append(lgtest.iso_to_epoch(e["time"]) - done)
            b.procs.stop_all()
        figure("forgive's return to the share on the cgroup", to_quota, "ms", 1000)
        figure("forgive's return to the limits_set event", to_event, "ms", 1000)
    finally:
        b.close()


def follow(runs):
    print("\n== 5. an event's time to its line on loginguardctl events --follow")
    b = Bench("observe")
    lines = []
    proc = subprocess.Popen([lgtest.CTL, "--config", b.daemon.conf, "events", "--follow",
                             "--json", "--kind", "user_forgiven"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def take():
        for line in proc.stdout:
            lines.append((time.time(), line))
    reader = threading.Thread(target=take, daemon=True)
    reader.start()
    try:
        user = b.user("e")
        ctl = [lgtest.CTL, "--socket", f"{b.workdir}/control.sock", "forgive", user.pw_name,
               "--reason"]
        # The follower is ready once it prints: forgive until it does.
        lgtest.wait_for(lambda: subprocess.run(ctl + ["ready?"], capture_output=True).returncode
                        == 0 and lines, lgtest.HANG, "the follower to start")
        latencies = []
        for i in range(max(runs, 10)):
            seen = len(lines)
            subprocess.run(ctl + [f"bench {i}"], check=True, capture_output=True)
            lgtest.wait_for(lambda: len(lines) > seen, lgtest.HANG, "the line", interval=0.001)
            at, text = lines[-1]
            latencies.append(at - lgtest.iso_to_epoch(json.loads(text)["time"]))
        figure("event --follow", latencies, "ms", 1000)
    finally:
        proc.terminate()
        proc.wait(timeout=lgtest.HANG)
        b.close()


def pam(runs):
    print("\n== 6. pam_loginguard's deadline (timeout=500ms, fail=open), open_session")
    if not pamenv.wrapper_library() or not os.path.exists(pamenv.LG_PAM):
        print("  skipped: no pam_wrapper or no lg-pam")
        return
    b = Bench("observe")
    env = pamenv.PamEnv()
    hung = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        user = b.user("p")
        path = os.path.join(env.workdir, "hung.sock")
        hung.bind(path)
        hung.listen(64)
        hung.setblocking(False)
        os.chmod(path, 0o666)
        env.module_service("hung", [f"socket={path}", "timeout=500ms", "fail=open"])
        env.module_service("real", [f"socket={b.workdir}/control.sock", "timeout=500ms"])
        over, real = [], []
        for _ in range(runs):
            over.append(env.run("hung", user.pw_name, "open", as_user=user).step("open").ms - 500)
            while True:  # the connections it left in the queue
                try:
                    hung.accept()[0].close()
                except BlockingIOError:
                    break
            real.append(env.run("real", user.pw_name, "open", as_user=user).step("open").ms)
        figure("a daemon that never answers: beyond the timeout", over, "ms")
        figure("the real daemon: open_session", real, "ms")
    finally:
        hung.close()
        env.cleanup()
        b.close()


def main():
    if os.geteuid() != 0:
        print("bench_latency: needs root (test users, cgroups); skipped")
        return 77
    print(f"bench_latency: {RUNS} runs of each (LG_BENCH_LATENCY_RUNS), on "
          f"{os.cpu_count()} cores; times from the daemon's events and this script's clock")
    lock = lgtest.take_lock()  # noqa: F841 - held to the end
    detection(RUNS)
    enforce(RUNS)
    follow(RUNS)
    pam(RUNS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
