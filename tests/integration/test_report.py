"""loginguardctl report over a known event log (the log and a rotated,
gzip-compressed copy of it, with a line that is not an event): the
expected counts in every format, hostile program names escaped, quoted
or kept out of the markup; and the HTML, opened in a headless chromium
with no network, shows its charts in the screenshot (issue: a usage
trace, simulate and reports)."""

import base64
import csv
import gzip
import io
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time
import unittest
import zlib

import lgtest

CTL = os.path.join(lgtest.TOP_BUILDDIR, "tools", "loginguardctl")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SCREEN = (1000, 1000)

A, B, C = 2000000101, 2000000102, 2000000103
HOSTILE = 'a,b"c<script>alert(1)</script>\x1b[31m\nx'
LEVELS = {
    1: {"number": 1, "name": "warned", "cpu_cores": 0.0, "memory_bytes": 0, "stop": False,
        "duration_s": 900},
    2: {"number": 2, "name": "restricted", "cpu_cores": 0.5, "memory_bytes": 0, "stop": True,
        "duration_s": 3600},
    3: {"number": 3, "name": "throttled", "cpu_cores": 1.0, "memory_bytes": 4 << 30,
        "stop": False, "duration_s": 7200},
}


def proc(comm, exe, rule=None, cls="none"):
    p = {"pid": 4242, "comm": comm, "exe": exe, "argv": [comm], "argv_bytes": len(comm),
         "argv_sha256": None, "argv_truncated": False, "cpu_cores": 2.0, "rss_bytes": 1 << 30,
         "class": cls}
    if rule:
        p["rule"] = rule
    return p


def event(when, name, user, uid, **fields):
    e = {"time": when + ".000Z", "host": "login1", "event": name, "user": user, "uid": uid}
    e.update(fields)
    e.setdefault("mode", "enforce")
    return e


def violation(when, user, uid, after, until, action, p, cpu=3.5):
    return event(when, "violation", user, uid, level_before=after - 1, level_after=after,
                 level=LEVELS[after], reason="cpu",
                 usage={"cpu_cores": cpu, "memory_bytes": 2 << 30, "window_s": 300.0},
                 processes=[p], until=until + ".000Z", action=action, applied=True)


def python3():
    return proc("python3", "/usr/bin/python3.11")


# The range is 2026-11-10 to 2026-11-13 UTC.  The older rotated copy was
# last written before the range, but within a level's duration of it
# (1h, the built-in ladder's longest): its limits count from the range's
# start.  The other copy holds the first days; one event of the log is
# after the range.
OLDER = [
    violation("2026-11-09T23:00:00", "alice", A, 3, "2026-11-10T01:00:00", "limit", python3()),
]
ROTATED = [
    event("2026-11-10T01:00:02", "level_expired", "alice", A, level_before=3, level_after=3,
          action="release"),
    violation("2026-11-10T05:00:00", "alice", A, 2, "2026-11-10T06:00:00", "stop", python3()),
    event("2026-11-10T05:00:01", "notice", "alice", A, kind="stopped", channel="email",
          outcome="sent"),
    event("2026-11-10T05:00:01", "notice", "alice", A, kind="stopped", channel="tty",
          outcome="skipped"),
    event("2026-11-10T06:00:01", "level_expired", "alice", A, level_before=2, level_after=2,
          action="release"),
    event("2026-11-10T07:00:00", "forbidden_process", "bob", B, level_before=0, level_after=0,
          level=None, reason="xmrig", processes=[proc("xmrig", "/home/bob/xmrig", "xmrig",
                                                      "forbidden")], action="stop"),
]
CURRENT = [
    violation("2026-11-11T10:00:00", "bob", B, 1, "2026-11-11T10:15:00", "warn",
              proc(HOSTILE, "/tmp/x y"), cpu=2.0),
    event("2026-11-11T10:30:00", "user_forgiven", "bob", B, by_uid=0, by="root",
          level_before=1),
    violation("2026-11-11T12:00:00", "bob", B, 1, "2026-11-11T12:15:00", "warn", python3(),
              cpu=2.5),
    event("2026-11-11T13:00:00", "compute_process", None, C, level_before=0, level_after=0,
          level=None, reason="lammps", processes=[proc("lmp", "/opt/lmp", "lammps", "compute")],
          action="stop"),
    event("2026-11-12T08:00:00", "level_decayed", "alice", A, level_before=2, level_after=1,
          action="lower"),
    violation("2026-11-12T23:30:00", "alice", A, 2, "2026-11-13T00:30:00", "stop", python3(),
              cpu=5.0),
    event("2026-11-12T23:30:01", "notice", "alice", A, kind="stopped", channel="all",
          outcome="rate_limited"),
    violation("2026-11-13T01:00:00", "bob", B, 2, "2026-11-13T02:00:00", "stop", python3()),
]
RANGE = ["--since", "2026-11-10T00:00Z", "--until", "2026-11-13T00:00Z"]


def png_pixels(data):
    """A PNG (8-bit RGB or RGBA, not interlaced) as (width, height, rows
    of (r, g, b) tuples)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def near(pixel, rgb, slack=40):
    return all(abs(p - (rgb >> s & 255)) <= slack for p, s in zip(pixel, (16, 8, 0)))


class ReportCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = lgtest.Fixture.of(cls, "report", users=False).workdir
        log = os.path.join(cls.dir, "events.jsonl")
        # logrotate leaves each copy as last written.
        for name, events, written in ((".2.gz", OLDER, "2026-11-09T23:00:00.000Z"),
                                      (".1.gz", ROTATED, "2026-11-10T07:00:01.000Z")):
            with gzip.open(log + name, "wt") as f:
                for e in events:
                    f.write(json.dumps(e) + "\n")
            stamp = lgtest.iso_to_epoch(written)
            os.utime(log + name, (stamp, stamp))
        with open(log, "w") as f:
            for e in CURRENT:
                f.write(json.dumps(e) + "\n")
            f.write("not an event\n")
        cls.conf = lgtest.write_config(os.path.join(cls.dir, "loginguard.conf"),
                                       daemon={"event_log": log})

    def report(self, *args, code=0):
        r = subprocess.run([CTL, "--config", self.conf, "report"] + RANGE + list(args),
                           capture_output=True, env=dict(os.environ, TZ="UTC"), timeout=60)
        self.assertEqual(r.returncode, code, r.stderr.decode(errors="replace"))
        return r

    def test_text(self):
        r = self.report()
        out = r.stdout.decode()
        self.assertIn("loginguard report from 2026-11-10 00:00 to 2026-11-13 00:00 (local time): "
                      "13 events\n", out)
        rows = [line.split() for line in out.splitlines()]
        self.assertIn(["alice", str(A), "2", "2h30m", "-", "2", "0", "1", "2"], rows)
        self.assertIn(["bob", str(B), "2", "-", "-", "1", "1", "0", "1"], rows)
        self.assertIn(["uid", str(C), str(C), "0", "-", "-", "0", "1", "0", "0"], rows)
        self.assertIn(["2026-11-10", "0", "0", "2", "2", "0", "0", "0", "0", "1", "1", "0", "0"], rows)
        self.assertIn(["2026-11-11", "2", "0", "1", "0", "0", "0", "0", "0", "0", "0", "0", "0"], rows)
        self.assertIn(["2026-11-12", "0", "0", "1", "0", "1", "0", "0", "0", "0", "0", "0", "1"], rows)
        self.assertIn(["python3", "0", "0", "3", "2", "-", "/usr/bin/python3.11"], rows)
        self.assertIn(["lammps", "compute", "1", "1"], rows)
        self.assertIn(["alice", str(A), "2", "2026-11-12", "23:30"], rows)
        self.assertNotIn("\x1b", out)
        self.assertIn('a,b"c<script>alert(1)</script>\\x1b[31m\\x0ax', out)
        # The line that is not an event is said, not counted.
        self.assertIn("skipped 1 line(s) that are not events", r.stderr.decode())

    def test_json(self):
        j = json.loads(self.report("--format", "json").stdout)
        self.assertEqual(j["events"], 13)
        users = {u["uid"]: u for u in j["users"]}
        self.assertEqual(list(users), [A, B, C])
        self.assertEqual((users[A]["violations"], users[A]["limited_s"], users[A]["returns"]),
                         (2, 9000, 2))
        self.assertEqual([(s["from"], s["until"]) for s in users[A]["limited"]],
                         [("2026-11-10T00:00:00Z", "2026-11-10T01:00:00Z"),
                          ("2026-11-10T05:00:00Z", "2026-11-10T06:00:00Z"),
                          ("2026-11-12T23:30:00Z", "2026-11-13T00:00:00Z")])
        self.assertEqual((users[B]["violations"], users[B]["processes"], users[B]["returns"]),
                         (2, 1, 1))
        self.assertIsNone(users[C]["user"])
        self.assertEqual([p["program"] for p in j["programs"]],
                         ["lmp", "xmrig", "python3", HOSTILE])
        self.assertEqual([(r["rule"], r["class"], r["hits"]) for r in j["rules"]],
                         [("lammps", "compute", 1), ("xmrig", "forbidden", 1)])
        self.assertEqual([(d["day"], d["stop"], d["release"], d["sent"]) for d in j["days"]],
                         [("2026-11-10", 2, 2, 1), ("2026-11-11", 1, 0, 0),
                          ("2026-11-12", 1, 0, 0)])
        self.assertEqual([(r["uid"], r["returns"]) for r in j["returns"]], [(A, 2), (B, 1)])
        # --json is the same.
        self.assertEqual(json.loads(self.report("--json").stdout), j)

    def test_csv(self):
        tables = {}
        for name in ("users", "programs", "rules", "days", "returns"):
            out = self.report("--format", "csv", "--table", name).stdout.decode()
            self.assertTrue(out.endswith("\r\n"))
            tables[name] = list(csv.DictReader(io.StringIO(out, newline="")))
        users = {row["uid"]: row for row in tables["users"]}
        self.assertEqual(users[str(A)], {"user": "alice", "uid": str(A), "violations": "2",
                                         "limited_s": "9000", "would_limit_s": "0",
                                         "top_level": "2",
                                         "processes": "0", "notices": "1", "returns": "2"})
        self.assertEqual(users[str(C)]["user"], f"uid {C}")
        self.assertEqual(tables["programs"][3]["program"],
                         'a,b"c<script>alert(1)</script>\\x1b[31m\\x0ax')
        self.assertEqual(tables["programs"][3]["exe"], "/tmp/x y")
        self.assertEqual([(r["rule"], r["hits"]) for r in tables["rules"]],
                         [("lammps", "1"), ("xmrig", "1")])
        self.assertEqual([r["rate_limited"] for r in tables["days"]], ["0", "0", "1"])
        self.assertEqual(tables["returns"][0]["last_return"], "2026-11-12T23:30:00Z")
        # CSV without --table is the users.
        self.assertEqual(self.report("--format", "csv").stdout.decode().splitlines()[0],
                         "user,uid,violations,limited_s,would_limit_s,top_level,processes,notices,"
                         "returns")

    def test_usage_errors(self):
        self.report("--format", "pdf", code=2)
        self.report("--table", "users", code=2)
        self.report("--format", "csv", "--table", "nope", code=2)
        r = subprocess.run([CTL, "--config", self.conf, "report", "--since", "1d", "--until",
                            "2d"], capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 2)

    def test_missing_log_is_exit_status_4(self):
        conf = lgtest.write_config(os.path.join(self.dir, "missing.conf"),
                                   daemon={"event_log": f"{self.dir}/nowhere/events.jsonl"})
        r = subprocess.run([CTL, "--config", conf, "report"], capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 4)
        self.assertIn(b"cannot read the event log", r.stderr)
        self.assertEqual(r.stdout, b"")

    def html(self):
        out = self.report("--format", "html").stdout.decode()
        path = os.path.join(self.dir, "report.html")
        with open(path, "w") as f:
            f.write(out)
        return out, path

    def test_html_is_one_file_without_script(self):
        out, _ = self.html()
        self.assertNotIn("<script", out)
        self.assertIn("a,b&quot;c&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[31m\\x0ax", out)
        srcs = re.findall(r'src="([^"]*)"', out)
        self.assertEqual(len(srcs), 3)  # the day chart, alice's and bob's
        for src in srcs:
            self.assertTrue(src.startswith("data:image/png;base64,"))
            width, height, _ = png_pixels(base64.b64decode(src.split(",", 1)[1]))
            self.assertIn((width, height), [(720, 240), (480, 150)])
        self.assertNotRegex(out, r"(href|url\(|@import|http:|https:)")

    @unittest.skipUnless(CHROMIUM, "chromium is not installed (tools/setup.sh installs it)")
    def test_html_screenshot_shows_the_charts(self):
        _, path = self.html()
        shot = os.path.join(self.dir, "report.png")
        profile = tempfile.mkdtemp(prefix="chromium.", dir=self.dir)
        started = time.monotonic()
        # No network: every address goes nowhere, and the page has none.
        r = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--user-data-dir={profile}", f"--screenshot={shot}",
             f"--window-size={SCREEN[0]},{SCREEN[1]}", "--proxy-server=127.0.0.1:9",
             "--host-resolver-rules=MAP * ~NOTFOUND", "--no-first-run",
             "--disable-background-networking", "--disable-component-update",
             "file://" + path],
            capture_output=True, timeout=120, env=dict(os.environ, HOME=profile))
        took = time.monotonic() - started
        print(f"chromium's screenshot took {took:.1f} s")
        self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace")[-2000:])
        keep = os.environ.get("LG_REPORT_SCREENSHOT")
        if keep:
            shutil.copy(shot, keep)
        with open(shot, "rb") as f:
            width, height, rows = png_pixels(f.read())
        self.assertEqual((width, height), SCREEN)
        # Each chart's colours, where the charts are: above the tables.
        colours = {"stop bars": 0xc62828, "release bars": 0x43a047, "warn bars": 0xe8c12c,
                   "lower bars": 0x7986cb, "CPU at violations": 0x1f5fbf,
                   "time limited": 0xf6d2d2}
        found = {what: [] for what in colours}
        for y in range(height):
            for x in range(0, width, 2):
                pixel = rows[y][x]
                if pixel == (255, 255, 255):
                    continue
                for what, rgb in colours.items():
                    if near(pixel, rgb, 10):
                        found[what].append(y)
        for what, ys in found.items():
            self.assertGreater(len(ys), 30, f"no {what} in the screenshot")
            self.assertLess(max(ys), 800, f"{what} below the charts")
        bars = sum(1 for y in range(120, 380) for x in range(width)
                   if rows[y][x] != (255, 255, 255))
        self.assertGreater(bars, 20000, "the day chart is not drawn")


if __name__ == "__main__":
    lgtest.run_tests()
