#!/usr/bin/python3
"""The shape of the code: which part may include and call which.

Looks at the sources (.c .cc .h) of daemon/, libloginguard/, pam/, tools/
and link/ (not tests/), and at the objects built in daemon/ and
libloginguard/.  A unit is a .c or .cc with its .h of the same name (a
header alone is a unit too); the files of one module cut in several,
which share a private header X_parts.h, are one unit, X.  Arrows between units come from two places:

  include  #include "x.h", resolved against the including file's folder,
           then daemon/, libloginguard/, then the other -I folders the
           Makefile.am files name (<system> includes and config.h are
           left out);
  call     a symbol an object needs (nm: undefined) and another object
           defines.  When nothing is built, only includes are checked.

The rules:
  1. Layers (LAYERS below, lowest first): a unit may include and call
     its own folder, lower folders and libloginguard, never a higher
     folder (an arrow back up).  pam/, tools/ and link/ may use only
     libloginguard and their own folder.
  2. No circle: no strongly connected set of more than one unit in the
     union of include and call arrows.
  3. core/daemon.h (the one context) is included only in daemon/core/.
  4. Nothing in libloginguard/ includes a daemon/ header.
  5. In daemon/ and libloginguard/, no string literal starts with "/proc"
     or "/sys" except in base/environment.c, which names the host's roots.
  6. The sampler applies no policy: its unit test (tests/unit/test_sampler,
     when built) links no rules code, no symbol that the objects of
     RULES_CODE define.
An include that breaks rule 3 or 4 is told once, under that rule.

Prints a summary line, then one line per failure, `file:line: what is
wrong; the fix`.  Exits 1 on any failure, else 0.  Source and build
directories: LG_TOP_SRCDIR and LG_TOP_BUILDDIR (as make check sets them).
"""
import glob
import os
import re
import subprocess
import sys

# The layer table, lowest first.
LAYERS = ["libloginguard", "daemon/base", "daemon/record", "daemon/observe",
          "daemon/enforce", "daemon/notify", "daemon/cluster",
          "daemon/control", "daemon/core"]
USERS = ["pam", "tools", "link"]       # libloginguard and their own folder only
ROOTS = ["daemon", "libloginguard"] + USERS
OBJECT_ROOTS = ["daemon", "libloginguard"]
CONTEXT = "daemon/core/daemon.h"
ROOTS_FILE = "daemon/base/environment.c"
SAMPLER_TEST = "tests/unit/test_sampler"
RULES_CODE = ["libloginguard/rules.c", "libloginguard/rules_judge.c",
              "libloginguard/programs.c", "libloginguard/regex_linear.cc"]
HOST_PATHS = ("/proc", "/sys")

SRC = os.path.abspath(os.environ.get("LG_TOP_SRCDIR")
                      or os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.abspath(os.environ.get("LG_TOP_BUILDDIR") or SRC)
INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)

failures = []                          # (file, line, text, kind)


def fail(path, line, text, kind="other"):
    failures.append((path, line, text, kind))


def folder(path):
    """The part a file belongs to: daemon/<part>, or its top folder."""
    parts = path.split("/")
    return "/".join(parts[:2]) if parts[0] == "daemon" and len(parts) > 2 else parts[0]


def allowed(src, dst):
    if src == dst or dst == "libloginguard":
        return True
    return src in LAYERS and dst in LAYERS and LAYERS.index(dst) < LAYERS.index(src)


def unit(path):
    """A file's unit: its name without the extension, or X for the files of
    one module cut in several, which share a private header X_parts.h."""
    return parts_of.get(path) or os.path.splitext(path)[0]


def parts_unit(path, text):
    """X when path is X_parts.h or includes it (the module's own files)."""
    if path.endswith("_parts.h"):
        return path[:-len("_parts.h")]
    for name in INCLUDE_RE.findall(text):
        if name.endswith("_parts.h"):
            return os.path.normpath(os.path.join(os.path.dirname(path),
                                                 os.path.basename(name)))[:-len("_parts.h")]
    return None


def short(u):
    return u[len("daemon/"):] if u.startswith("daemon/") else u


def scan(text):
    """The text with comments blanked (newlines kept), and the string
    literals as (line, body as written)."""
    out, literals, i, n, line = [], [], 0, len(text), 1
    while i < n:
        c, two = text[i], text[i:i + 2]
        if two == "//":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif two == "/*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(" " + "\n" * text.count("\n", i, j))
            line += text.count("\n", i, j)
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            if c == '"':
                literals.append((line, text[i + 1:j]))
            out.append(text[i:j + 1])
            i = j + 1
        else:
            line += c == "\n"
            out.append(c)
            i += 1
    return "".join(out), literals


def sources():
    found = []
    for root in ROOTS:
        for dirpath, dirs, files in os.walk(os.path.join(SRC, root)):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for f in sorted(files):
                if f.endswith((".c", ".cc", ".h")):
                    found.append(os.path.relpath(os.path.join(dirpath, f), SRC))
    return found


def include_dirs():
    dirs = ["daemon", "libloginguard"]
    for am in sorted(glob.glob(os.path.join(SRC, "*", "Makefile.am"))):
        here = os.path.relpath(os.path.dirname(am), SRC)
        with open(am) as f:
            for top, sub in re.findall(r"-I\$\((top_)?srcdir\)/?([\w./-]*)", f.read()):
                d = os.path.normpath(sub if top else os.path.join(here, sub))
                if d not in dirs:
                    dirs.append(d)
    return dirs


def resolve(name, including, dirs):
    for d in [os.path.dirname(including)] + dirs:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(SRC, p)):
            return p
    return None


def objects():
    """{object path: source path} for the built objects of OBJECT_ROOTS."""
    found = {}
    for root in OBJECT_ROOTS:
        for dirpath, dirs, files in os.walk(os.path.join(BUILD, root)):
            for f in sorted(files):
                if not f.endswith(".o") or "-" not in f:
                    continue
                stem = f[f.index("-") + 1:-2]
                where = os.path.relpath(dirpath, BUILD).replace("/.libs", "")
                for ext in (".c", ".cc"):
                    cands = [os.path.join(where, stem + ext)]
                    if not os.path.isfile(os.path.join(SRC, cands[0])):
                        cands = [p for p in all_sources if p.startswith(root + "/")
                                 and os.path.basename(p) == stem + ext]
                    obj = os.path.join(dirpath, f)
                    if (len(cands) == 1 and os.path.isfile(os.path.join(SRC, cands[0])) and
                            os.path.getmtime(obj) >= os.path.getmtime(os.path.join(SRC, cands[0]))):
                        found.setdefault(cands[0], obj)
    return {o: s for s, o in found.items()}


def symbols(objs):
    """{object: (defined, needed)} from nm, or None when nm cannot run."""
    try:
        out = subprocess.run(["nm", "-P", "-A"] + sorted(objs), capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    table = {o: (set(), set()) for o in objs}
    for row in out.splitlines():
        obj, _, rest = row.rpartition(": ")
        fields = rest.split()
        if obj not in table or len(fields) < 2:
            continue
        name, kind = fields[0], fields[1]
        if kind in "Uwv":
            table[obj][1].add(name)
        elif kind.isupper():
            table[obj][0].add(name)
    return table


def first_use(path, symbol):
    for n, text in enumerate(code[path].split("\n"), 1):
        if not text.lstrip().startswith("#") and re.search(r"\b%s\b" % re.escape(symbol), text):
            return n
    return 1


def circles(nodes, edges):
    """Strongly connected sets of more than one unit: what a unit reaches
    and is reached from."""
    def reach(start, pairs):
        seen, todo = {start}, [start]
        while todo:
            v = todo.pop()
            for w in pairs.get(v, ()):
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        return seen
    succ, pred, found, done = {}, {}, [], set()
    for a, b in edges:
        succ.setdefault(a, []).append(b)
        pred.setdefault(b, []).append(a)
    for v in sorted(nodes):
        if v not in done:
            comp = reach(v, succ) & reach(v, pred)
            done |= comp
            if len(comp) > 1:
                found.append(sorted(comp))
    return found


def one_cycle(comp, edges):
    """A shortest way round from the component's first unit back to it."""
    members, start = set(comp), comp[0]
    back, queue = {start: None}, [start]
    for v in queue:
        for a, b in sorted(edges):
            if a == v and b in members:
                if b == start:
                    path = [v]
                    while back[path[-1]] is not None:
                        path.append(back[path[-1]])
                    return list(reversed(path)) + [start]
                if b not in back:
                    back[b] = v
                    queue.append(b)
    return comp


all_sources = sources()
code, units, unplaced, parts_of, literals_of = {}, set(), set(), {}, {}
for path in all_sources:
    with open(os.path.join(SRC, path), errors="replace") as f:
        code[path], literals_of[path] = scan(f.read())
    parts_of[path] = parts_unit(path, code[path])
for path in all_sources:
    literals = literals_of[path]
    units.add(unit(path))
    top = folder(path)
    if top not in LAYERS + USERS and top not in unplaced:
        unplaced.add(top)
        fail(path, 1, "folder %s is not in the layer table; add it to LAYERS "
             "in tests/layers.py" % top)
    if path.startswith(("daemon/", "libloginguard/")) and path != ROOTS_FILE:
        for line, body in literals:
            if body.startswith(HOST_PATHS):
                fail(path, line, '"%s" names a host path; take it from struct '
                     'environment (base/environment.h)' % body[:40])

# Include arrows.
edges = {}                             # (unit, unit) -> [how]
dirs = include_dirs()
for path in all_sources:
    for m in INCLUDE_RE.finditer(code[path]):
        name, line = m.group(1), code[path].count("\n", 0, m.start()) + 1
        if name == "config.h":
            continue
        target = resolve(name, path, dirs)
        if target is None:
            fail(path, line, '"%s" not found; name it from its folder '
                 '(daemon/ or libloginguard/)' % name)
            continue
        a, b = unit(path), unit(target)
        if a != b:
            edges.setdefault((a, b), []).append("includes %s (%s:%d)" % (name, path, line))
        if target == CONTEXT and folder(path) != "daemon/core":
            fail(path, line, "includes core/daemon.h outside daemon/core; "
                 "hand it a narrow view of what it uses instead of struct daemon")
        elif path.startswith("libloginguard/") and target.startswith("daemon/"):
            fail(path, line, "libloginguard includes the daemon's %s; move what it "
                 "needs into libloginguard or have the daemon pass it in" % target)
        elif not allowed(folder(path), folder(target)):
            fail(path, line, "%s includes %s, a higher part (%s); move what it needs "
                 "down to %s or below, or have %s hand it in"
                 % (folder(path), target, folder(target), folder(path),
                    folder(target)), "up")

# Call arrows.
objs = objects()
table = symbols(objs) if objs else None
if table is None:
    note = ("no objects built in %s (daemon/, libloginguard/): calls not checked, "
            "includes only; build first" % BUILD if not objs else
            "nm did not run: calls not checked, includes only")
else:
    note = "%d objects" % len(objs)
    owner = {}
    for obj in sorted(table):
        for name in table[obj][0]:
            owner.setdefault(name, obj)
    for obj in sorted(table):
        wanted = {}
        for name in table[obj][1]:
            o = owner.get(name)
            if o and unit(objs[o]) != unit(objs[obj]):
                wanted.setdefault(o, []).append(name)
        for o, names in sorted(wanted.items()):
            a, b = unit(objs[obj]), unit(objs[o])
            names.sort()
            edges.setdefault((a, b), []).append("calls %s (%s -> %s)" % (
                ", ".join(names), os.path.basename(obj), os.path.basename(o)))
            src, dst = folder(objs[obj]), folder(objs[o])
            if not allowed(src, dst):
                fail(objs[obj], first_use(objs[obj], names[0]),
                     "%s calls %s in %s, a higher part (%s; %s -> %s); move it "
                     "down or have %s hand it in as a callback or a value"
                     % (src, ", ".join(names), objs[o], dst, os.path.basename(obj),
                        os.path.basename(o), dst), "up")

# The sampler's unit test links no rules code.
test_binary = os.path.join(BUILD, SAMPLER_TEST)
if table is not None and os.path.isfile(test_binary):
    rules_symbols = set()
    for obj, src in objs.items():
        if src in RULES_CODE:
            rules_symbols |= table[obj][0]
    linked = symbols([test_binary])
    both = rules_symbols & linked[test_binary][0] if linked else set()
    found = sorted(n for n in both if not n.startswith("DW."))  # DW.*: C++ unwinding
    if found:
        fail("tests/unit/test_sampler.c", 1, "the sampler's test links rules code (%s); the "
             "sampler must judge through its scope's judge (judge.h)" % ", ".join(found[:5]))

# Circles.
for comp in circles(units, edges):
    ups = ["%s -> %s" % (short(a), short(b)) for a, b in sorted(edges)
           if a in comp and b in comp and not allowed(folder(a), folder(b))]
    if ups:
        how = "its arrows up: " + ", ".join(ups)
    else:
        way = one_cycle(comp, edges)
        how = "one way round: " + " | ".join(
            "%s -> %s %s" % (short(a), short(b), "; ".join(edges[(a, b)]))
            for a, b in zip(way, way[1:]))
    first = sorted(p for p in all_sources if unit(p) == comp[0])[0]
    fail(first, 1, "circle of %d units (%s); %s; break it: move the shared piece "
         "into the lower unit or pass a narrow view"
         % (len(comp), ", ".join(map(short, comp)), how), "circle")

include_count = sum(any(h.startswith("includes") for h in e) for e in edges.values())
calls = sum(any(h.startswith("calls") for h in e) for e in edges.values())
up = sum(1 for f in failures if f[3] == "up")
circle_count = sum(1 for f in failures if f[3] == "circle")
print("layers: %d units, %d include arrows, %d call arrows, %d circles, "
      "%d arrows back up, %d other failures (%s)"
      % (len(units), include_count, calls, circle_count, up,
         len(failures) - up - circle_count, note))
for path, line, text, _ in sorted(failures):
    print("%s:%d: %s" % (path, line, text))
sys.exit(1 if failures else 0)
