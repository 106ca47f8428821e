#!/usr/bin/python3
"""The cluster's figures (issue 13), against a private PostgreSQL 15
server (tests/integration/pgserver.py):

 1. propagation: an admin change on node A (an exemption added, then
    removed) until node B logs standing_received for the user, with two
    real nodes (pid namespaces, a daemon each, tests/integration/
    clusternode.py); the times are those of the two event logs (ms, the
    same clock);
 2. database statements per sample when nothing changes: the two nodes
    idle, every statement of their link sessions counted in the server's
    log (log_statement = all for the node role) between two markers;
 3. one server's load with NODES links (tests/helpers/lg-cluster-link,
    the daemon's own link process) of USERS users each: a raise stored for
    every user (wall time, changes/s, the server's CPU seconds), the
    server's CPU per second with all links idle, and the fan-out of one
    change to every other link.

Needs root (test users, cgroups, pid namespaces) and PostgreSQL 15;
exits 77 without them.  Holds the global test lock.  About 1.5 minutes.
LG_BENCH_CLUSTER_NODES and LG_BENCH_CLUSTER_USERS change the third part's
size (50 and 500); LG_BENCH_CLUSTER_PARTS="3" runs the third part alone,
"12" the first two."""

import fcntl
import json
import os
import re
import selectors
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP_SRCDIR = os.environ.get("LG_TOP_SRCDIR", os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(TOP_SRCDIR, "tests", "integration"))

import lgtest  # noqa: E402
import pgserver  # noqa: E402
from lgtest import TestUsers, wait_for  # noqa: E402
from pgserver import NODE, OWNER  # noqa: E402

SKIP = 77
SAMPLE = 0.5                  # s, the nodes' sample_interval
CHANGES = 20                  # part 1: admin changes timed
IDLE_SAMPLES = 40             # part 2: samples each node takes idle
LINK_NODES = int(os.environ.get("LG_BENCH_CLUSTER_NODES", "50"))
LINK_USERS = int(os.environ.get("LG_BENCH_CLUSTER_USERS", "500"))
PARTS = os.environ.get("LG_BENCH_CLUSTER_PARTS", "123")  # "12": the two nodes only
LINK_WINDOW = 32              # records a link has unanswered, as a daemon's queue
IDLE_SECONDS = 10.0           # part 3: all links idle
BURSTS = 10                   # part 3: single changes fanned out
LINK_UID0 = lgtest.TEST_UID_MIN + 100000  # no accounts: the link needs none
HELPER = os.path.join(lgtest.TOP_BUILDDIR, "tests", "helpers", "lg-cluster-link")
CTL = os.path.join(lgtest.TOP_BUILDDIR, "tools", "loginguardctl")
# Names each server log line's session: the application and the role.
LOG_PREFIX = "%m [%p] %a %u: "


def summary(values, unit="ms", scale=1000.0):
    v = sorted(x * scale for x in values)
    return (f"min {v[0]:.0f} {unit}, median {statistics.median(v):.0f} {unit}, "
            f"max {v[-1]:.0f} {unit}")


# ------------------------------------------------------------ the server

def server_cpu(server):
    """utime + stime of the server's processes so far: the postmaster,
    what it has reaped, and its live children (the backends)."""
    with open(os.path.join(server.data, "postmaster.pid")) as f:
        postmaster = int(f.readline())
    tick = os.sysconf("SC_CLK_TCK")

    def stat(pid):
        with open(f"/proc/{pid}/stat") as f:
            return [int(x) for x in f.read().rsplit(")", 1)[1].split()[11:15]]
    total = sum(stat(postmaster))
    with open(f"/proc/{postmaster}/task/{postmaster}/children") as f:
        for pid in f.read().split():
            try:
                total += sum(stat(pid)[:2])
            except FileNotFoundError:
                pass  # ended meanwhile: in the postmaster's cutime now
    return total / tick


def mark_log(server, n):
    """A line in the server's log that the statements are counted from."""
    server.psql(f"SET log_statement = 'all'; SELECT 'bench-mark-{n}'")
    return f"bench-mark-{n}"


LOG_LINE = re.compile(r"\S+ \S+ \S+ \[(\d+)\] (\S*) (\S*): (\w+):\s+(.*)")


def statements_between(server, first, last):
    """The statements of the node sessions between two marks, by backend
    pid, and the node each backend pid registered as (from the logged
    parameters of its INSERT INTO loginguard.nodes)."""
    node_of, by_pid, inside, registering = {}, {}, False, set()
    for line in server.log_text().splitlines():
        m = LOG_LINE.match(line)
        if not m:
            continue
        pid, _, user, level, msg = m.groups()
        statement = level == "LOG" and (msg.startswith("statement: ") or
                                        msg.startswith("execute "))
        if statement and first in msg:
            inside = True
        elif statement and last in msg:
            inside = False
        elif statement and user == NODE:
            if "INSERT INTO loginguard.nodes" in msg:
                registering.add(pid)
            if inside:
                by_pid.setdefault(pid, []).append(msg)
        elif level == "DETAIL" and pid in registering and msg.startswith("parameters: $1 = '"):
            node_of[pid] = msg.split("'", 2)[1]
            registering.discard(pid)
    return by_pid, node_of


# ------------------------------------------------------------ parts 1 and 2

def node_policy(conninfo, name):
    def policy(parent, workdir):
        return lgtest.policy(lgtest.enforcing(parent, workdir, sample_interval=f"{SAMPLE}s",
                                              scan_interval="2s", events_per_user=0),
                             **lgtest.throttle_policy(0.8, 2, 0.3),
                             cluster={"database": conninfo, "node": name,
                                      "link_user": lgtest.LINK_USER})
    return policy


def samples(node):
    for line in node.ctl("metrics").splitlines():
        if line.startswith("loginguard_sample_duration_seconds_count "):
            return float(line.split()[1])
    raise AssertionError(f"node {node.name}: no loginguard_sample_duration_seconds_count")


def event_time(e):
    return lgtest.iso_to_epoch(e["time"])


def propagation(a, b, user):
    """CHANGES admin changes on A, each until B has the user's row: from
    the command (the bench's clock, before loginguardctl) and from A's
    event for it.  A writes that event after handing the change to its
    link, so B's may come first: the second figure can be below 0."""
    from_command, from_event = [], []
    for i in range(CHANGES):
        remove = i % 2 == 1
        marks = a.daemon.mark(), b.daemon.mark()
        t0 = time.time()
        a.ctl("exempt", user.pw_name, *(["--remove"] if remove else ["--for", "1h"]),
              "--reason", "bench")
        made = a.daemon.wait_event(10, after=marks[0],
                                   event="exempt_removed" if remove else "exempt_added",
                                   uid=user.pw_uid)
        got = b.daemon.wait_event(10, after=marks[1], event="standing_received",
                                  uid=user.pw_uid)
        # Event times are whole ms, cut down: B's can read up to 1 ms early.
        from_command.append(max(event_time(got) + 0.0005 - t0, 0))
        from_event.append(event_time(got) - event_time(made))
    print(f"  1. propagation, an admin change on A (exempt / exempt --remove) until B's "
          f"standing_received, {CHANGES} changes:")
    print(f"     from loginguardctl's start on A: {summary(from_command)}")
    print(f"     from A's exempt_added / exempt_removed event: {summary(from_event)}")
    return from_command


def idle_statements(server, nodes):
    """Every statement of the node sessions while both nodes take
    IDLE_SAMPLES samples with nothing changing."""
    time.sleep(1.0)  # let part 1's last change settle before the window opens
    before = {n.name: samples(n) for n in nodes}
    first = mark_log(server, 1)
    t0 = time.monotonic()
    wait_for(lambda: all(samples(n) - before[n.name] >= IDLE_SAMPLES for n in nodes),
             IDLE_SAMPLES * SAMPLE * 3 + 10, f"{IDLE_SAMPLES} samples on each node",
             interval=0.5)
    last = mark_log(server, 2)
    elapsed = time.monotonic() - t0
    taken = {n.name: samples(n) - before[n.name] for n in nodes}
    by_pid, node_of = statements_between(server, first, last)
    print(f"  2. database statements with nothing changing, {elapsed:.1f} s idle:")
    logged = sum(1 for line in server.log_text().splitlines()
                 if f" {NODE}: LOG:  statement: " in line or f" {NODE}: LOG:  execute " in line)
    print(f"     (the server logged {logged} statements of the node sessions in all, "
          f"parts 1 and 2: the count below is of the same log)")
    if sorted(node_of.values()) != sorted(taken):
        # No session registered in the log: the count below would prove nothing.
        print(f"     the server's log names no session of {sorted(taken)} (found "
              f"{node_of}): log_statement did not reach them; the count is not valid")
    per_node = {name: [] for name in taken}
    for pid, statements in by_pid.items():
        per_node.setdefault(node_of.get(pid, f"backend {pid} (node unknown)"), []).extend(
            statements)
    for name, statements in sorted(per_node.items()):
        count = taken.get(name)
        rate = f"{len(statements) / count:.3f} statements per sample" if count else "no samples"
        print(f"     node {name}: {len(statements)} statements in {count or 0:.0f} samples, "
              f"{rate}")
        for s in statements[:10]:
            print(f"       {s[:160]}")
        if len(statements) > 10:
            print(f"       ... and {len(statements) - 10} more")
    return sum(len(s) for s in per_node.values()), sum(taken.values())


def two_nodes(server, users):
    from clusternode import Node  # needs lgtest's paths set up first
    user = users.add("lgtestbench1")
    # The nodes' sessions log every statement from their first one on.
    server.psql(f"ALTER ROLE {NODE} SET log_statement = 'all'", dbname="postgres")
    nodes = []
    try:
        for name in ("bencha", "benchb"):
            n = Node(name, node_policy(server.conninfo(NODE), name))
            nodes.append(n)
            n.start()
        for n in nodes:
            n.daemon.wait_event(20, event="cluster_up")
        took = propagation(nodes[0], nodes[1], user)
        statements = idle_statements(server, nodes)
    finally:
        for n in nodes:
            n.close()
        server.psql(f"ALTER ROLE {NODE} RESET log_statement", dbname="postgres")
    return took, statements


# ------------------------------------------------------------ part 3

def penalty(level, now):
    return {"level": level, "since": now, "until": now + 600000000, "quiet_since": now,
            "last_violation": now, "violations": level, "last_reason": "cpu",
            "last_cpu": 2.5, "last_memory": 1 << 30, "last_window": 60000000}


def raise_record(seq, uid, base_rev, level):
    """A raise as the daemon sends it (cluster_link.h)."""
    now = int(time.time() * 1e6)
    return {"t": "record", "seq": seq, "kind": "raise", "uid": uid, "base_rev": base_rev,
            "after_seq": 0, "at": now, "by": None, "penalty": penalty(level, now),
            "exempt_until": 0}


STANDING = b'{"t":"standing","uid":'


class Link:
    def __init__(self, index, database, stderr):
        self.index = index
        self.name = f"benchlink{index:02d}"
        self.uids = range(LINK_UID0 + index * 1000, LINK_UID0 + index * 1000 + LINK_USERS)
        self.p = subprocess.Popen([HELPER, self.name], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=stderr, bufsize=0,
                                  env=dict(os.environ, LG_CLUSTER_DATABASE=database,
                                           LG_CLUSTER_LINK_USER=lgtest.LINK_USER))
        for f in (self.p.stdin, self.p.stdout):
            os.set_blocking(f.fileno(), False)
        self.inbuf = b""
        self.out = b""
        self.up = False
        self.stored = 0
        self.sent = 0
        self.standings = 0
        self.seen = set()      # uids it has printed the standing of
        self.downs = []

    def send(self, obj):
        self.out += json.dumps(obj).encode() + b"\n"

    def flush(self):
        if self.out:
            try:
                n = os.write(self.p.stdin.fileno(), self.out)
                self.out = self.out[n:]
            except BlockingIOError:
                pass


class LinkPool:
    """NODES helpers read and written by one loop (a thread each would
    cost the server its CPU): the lines they print, the packets sent."""

    def __init__(self, database, count, stderr):
        self.links = [Link(i, database, stderr) for i in range(count)]
        self.sel = selectors.DefaultSelector()
        for link in self.links:
            self.sel.register(link.p.stdout, selectors.EVENT_READ, link)
        self.watch = None      # uid whose standing the burst waits for
        self.got = {}          # link index -> when it printed the watched uid

    def pump(self, timeout):
        for link in self.links:
            link.flush()
        now = time.monotonic()
        for key, _ in self.sel.select(timeout):
            link = key.data
            try:
                data = os.read(link.p.stdout.fileno(), 1 << 20)
            except BlockingIOError:
                continue
            if not data:
                self.sel.unregister(link.p.stdout)
                continue
            lines = (link.inbuf + data).split(b"\n")
            link.inbuf = lines.pop()
            for line in lines:
                self.line(link, line, now)

    def line(self, link, line, now):
        if line.startswith(STANDING):
            uid = int(line[len(STANDING):line.index(b",", len(STANDING))])
            link.standings += 1
            if uid >= LINK_UID0:
                link.seen.add(uid)
            if uid == self.watch and link.index not in self.got:
                self.got[link.index] = now
            return
        pkt = json.loads(line)
        if pkt["t"] == "up":
            link.up = True
        elif pkt["t"] == "stored":
            link.stored = max(link.stored, pkt["seq"])
        elif pkt["t"] == "down":
            link.downs.append(pkt.get("error"))

    def until(self, condition, timeout, what):
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}")
            self.pump(0.05)

    def close(self):
        for link in self.links:
            link.out = b""
            try:
                link.p.stdin.close()
            except OSError:
                pass
        for link in self.links:
            try:
                link.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                link.p.kill()
                link.p.wait()


def report_missing(pool, server):
    """Which standings each link never printed (a link bug): how many."""
    every = {uid for link in pool.links for uid in link.uids}
    total = shown = 0
    for link in pool.links:
        missing = sorted(every - link.seen)
        total += len(missing)
        if missing and shown < 5:
            shown += 1
            owners = sorted({(uid - LINK_UID0) // 1000 for uid in missing})
            print(f"     {link.name} never printed {len(missing)} of {len(every)} standings "
                  f"(of nodes {owners[:10]}{'...' if len(owners) > 10 else ''}; "
                  f"uids {missing[:5]}...), {link.standings} printed in all")
            rows = server.psql("SELECT uid, rev, node, seq FROM loginguard.standing "
                               f"WHERE uid IN ({', '.join(map(str, missing[:5]))})")
            print(f"       their rows (uid|rev|node|seq): {rows.splitlines()}")
    print(f"     {total} standings in all, on {sum(1 for x in pool.links if len(x.seen) < len(every))} "
          f"links, never printed by the links that should have "
          f"(each a change that node never learns of until another wakes its link)")
    return total


def bulk(pool, server):
    """A raise for each user of each link, a window of records in flight
    per link as a daemon's queue would have."""
    cpu0, t0 = server_cpu(server), time.monotonic()

    def feed():
        for link in pool.links:
            while link.sent < LINK_USERS and link.sent - link.stored < LINK_WINDOW:
                link.send(raise_record(link.sent + 1, link.uids[link.sent], 0, 1))
                link.sent += 1
        return all(link.stored >= LINK_USERS for link in pool.links)
    pool.until(feed, 600, "every link to store its raises")
    stored_in, cpu_stored = time.monotonic() - t0, server_cpu(server) - cpu0
    everyone = len(pool.links) * LINK_USERS
    print(f"     {everyone} raises ({len(pool.links)} nodes x {LINK_USERS} users, "
          f"{LINK_WINDOW} in flight per node) stored in {stored_in:.1f} s: "
          f"{everyone / stored_in:.0f} changes/s, server CPU {cpu_stored:.1f} s "
          f"({1000 * cpu_stored / everyone:.2f} ms per change)")
    # Until every link has printed every row, or has printed nothing for
    # 3 s (a link that never prints some: report_missing says which).
    complete = lambda: all(len(link.seen) >= everyone for link in pool.links)  # noqa: E731
    quiet(pool, 3.0, 120, done=complete)
    settled_in = time.monotonic() - t0 - (0 if complete() else 3.0)
    cpu_settled = server_cpu(server) - cpu0
    received = sum(link.standings for link in pool.links)
    print(f"     every node had {'every' if complete() else 'all it got of the'} user's "
          f"standing after {settled_in:.1f} s ({received} standings received in all, "
          f"{received / everyone:.1f} per change), server CPU {cpu_settled:.1f} s by then")
    missing = 0 if complete() else report_missing(pool, server)
    return everyone / stored_in, cpu_stored, missing


def quiet(pool, seconds, timeout, done=lambda: False):
    """Until the links have printed nothing for seconds (the fan-out's
    last duplicates), or done(); how long that took."""
    t0 = time.monotonic()
    total = lambda: sum(link.standings for link in pool.links)  # noqa: E731
    last, since = total(), time.monotonic()
    while time.monotonic() - since < seconds and not done():
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"the links still print standings after {timeout}s")
        pool.pump(0.1)
        if total() != last:
            last, since = total(), time.monotonic()
    return time.monotonic() - t0 - seconds


def idle(pool, server):
    quiet(pool, 1.0, 60)
    before = sum(link.standings for link in pool.links)
    cpu0, t0 = server_cpu(server), time.monotonic()
    while time.monotonic() - t0 < IDLE_SECONDS:  # a measuring window, not a wait
        pool.pump(0.2)
    elapsed = time.monotonic() - t0
    rate = (server_cpu(server) - cpu0) / elapsed
    after = sum(link.standings for link in pool.links)
    print(f"     all {len(pool.links)} nodes idle for {elapsed:.1f} s: server CPU "
          f"{1000 * rate:.1f} ms per second, {after - before} standings received")
    return rate


def bursts(pool, server):
    took = []
    cpu0 = server_cpu(server)
    for i in range(BURSTS):
        link = pool.links[(i * 7) % len(pool.links)]
        uid = link.uids[i % LINK_USERS]
        rev = int(server.psql(f"SELECT rev FROM loginguard.standing WHERE uid = {uid}"))
        pool.watch, pool.got = uid, {}
        link.sent += 1
        link.send(raise_record(link.sent, uid, rev, 2))
        t0 = time.monotonic()
        others = [x.index for x in pool.links if x is not link]
        pool.until(lambda: all(j in pool.got for j in others), 30,
                   f"every other link to print uid {uid}'s standing")
        took.append(max(pool.got[j] for j in others) - t0)
        pool.until(lambda: link.stored >= link.sent, 10, "the burst's change stored")
    pool.watch = None
    cpu = server_cpu(server) - cpu0
    print(f"     one change fanned out to the {len(pool.links) - 1} other nodes, "
          f"{BURSTS} changes: {summary(took)} (server CPU {1000 * cpu / BURSTS:.0f} ms "
          f"per change, psql look-ups included)")
    return took


def many_links(server, workdir):
    print(f"  3. one server, {LINK_NODES} nodes (link processes) of {LINK_USERS} users each:")
    stderr_path = os.path.join(workdir, "links.stderr")
    with open(stderr_path, "w") as stderr:
        pool = LinkPool(server.conninfo(NODE), LINK_NODES, stderr)
    try:
        pool.until(lambda: all(link.up for link in pool.links), 60, "every link's up")
        # Each link's first rows (none yet) are sent with its up: quiet now.
        rate, cpu, missing = bulk(pool, server)
        idle_rate = idle(pool, server)
        took = bursts(pool, server)
    finally:
        pool.close()
        said = lgtest.read(stderr_path).strip()
        if said:
            print(f"     the links' stderr ({len(said.splitlines())} lines):")
            for line in said.splitlines()[:5]:
                print(f"       {line}")
    downs = [(link.name, d) for link in pool.links for d in link.downs]
    for name, error in downs[:5]:
        print(f"     {name} went down: {error}")
    return rate, cpu, idle_rate, took, missing


# ------------------------------------------------------------ main

def main():
    print("bench_cluster: the shared standing through one PostgreSQL 15 server")
    if os.geteuid() != 0:
        print("  needs root (test users, cgroups, pid namespaces); skipped")
        return SKIP
    if not pgserver.available():
        print("  PostgreSQL 15 (postgresql-15, the postgres user) is not installed; skipped")
        return SKIP
    for path in (HELPER, CTL, lgtest.DAEMON):
        if not os.access(path, os.X_OK):
            print(f"  no {path} (make and make check build it); skipped")
            return SKIP
    # One test run at a time on a node: test users, cgroups and CPU are shared.
    lock = open("/run/lock/loginguard-tests.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    t0 = time.monotonic()
    users = TestUsers()
    users.add_link_user()
    server = pgserver.PgServer(settings={
        "max_connections": max(40, LINK_NODES + 30),
        "log_line_prefix": f"'{LOG_PREFIX}'",
    })
    workdir = tempfile.mkdtemp(prefix="lgbench-cluster.")
    try:
        conf = os.path.join(workdir, "owner.conf")
        with open(conf, "w") as f:
            f.write(f"[cluster]\ndatabase = {server.conninfo(OWNER)}\n")
        subprocess.run([CTL, "--config", conf, "cluster", "init", "--grant", NODE],
                       check=True, capture_output=True, timeout=60)
        took, (statements, taken) = two_nodes(server, users) if "1" in PARTS else ([0], (0, 0))
        rate, cpu, idle_rate, fanout, missing = many_links(server, workdir) \
            if "3" in PARTS else (0, 0, 0, [0], 0)
    finally:
        users.remove_all()
        server.teardown()
        subprocess.run(["rm", "-rf", workdir])
    print("  summary:")
    if "1" in PARTS:
        print(f"    propagation node to node, from loginguardctl on A: median {1000 * statistics.median(took):.0f} ms, "
              f"max {1000 * max(took):.0f} ms")
        print(f"    statements per sample, nothing changing: "
              f"{statements / taken if taken else float('nan'):.3f} ({statements} in "
              f"{taken:.0f} samples of 2 nodes)")
    if "3" in PARTS:
        print(f"    {LINK_NODES} x {LINK_USERS}: {rate:.0f} changes/s stored, "
              f"{1000 * cpu / (LINK_NODES * LINK_USERS):.2f} ms server CPU per change, "
              f"idle {1000 * idle_rate:.1f} ms CPU/s, fan-out median "
              f"{1000 * statistics.median(fanout):.0f} ms")
    if missing:
        print(f"    {missing} standings of the bulk never reached a link that should have "
              f"printed them (a link bug)")
    print(f"  ({time.monotonic() - t0:.0f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
