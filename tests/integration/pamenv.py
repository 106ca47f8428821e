"""The PAM module run for real through PAM: pam_wrapper lets libpam read
service files from a directory of the test's own (so /etc/pam.d is never
touched), and tests/helpers/lg-pam drives the steps through libpamtest
and prints what each returned, how long it took, what the user was
shown and where the process landed.

    env = pamenv.PamEnv(workdir)
    env.module_service("lg", ["socket=/tmp/x.sock", "timeout=500ms"])
    result = env.run("lg", "lgtest1", "account", "open", "close")
    result.step("open").rc == pamenv.PAM_SUCCESS
    result.step("open").infos          # PAM_TEXT_INFO texts, in order
    result.step("open").cgroups        # /proc/self/cgroup after the call
    result.syslog                      # [(priority, text)] of pam_syslog

Nothing is mocked here: the real libpam loads the real module by its
path in the build tree.  Without pam_wrapper (or without libpamtest, so
that lg-pam was not built) require_pam_wrapper() skips (exit 77); a
missing module with pam_wrapper present is a failure, not a skip."""

import glob
import os
import re
import shutil
import subprocess
import sys

import lgtest

MODULE = os.path.join(lgtest.TOP_BUILDDIR, "pam", ".libs", "pam_loginguard.so")
LG_PAM = os.path.join(lgtest.TOP_BUILDDIR, "tests", "helpers", "lg-pam")
SYSTEM_MODULES = "/lib/x86_64-linux-gnu/security"

PAM_SUCCESS = 0
PAM_PERM_DENIED = 6
PAM_USER_UNKNOWN = 10
PAM_SESSION_ERR = 14
PAM_IGNORE = 25
LOG_ERR = 3
LOG_NOTICE = 5


def wrapper_library():
    """The path of libpam_wrapper.so, or None when pam_wrapper is absent."""
    try:
        out = subprocess.run(["pkg-config", "--libs", "pam_wrapper"], capture_output=True,
                             text=True, check=False).stdout
        for word in out.split():
            if word.endswith(".so") and os.path.exists(word):
                return word
    except FileNotFoundError:
        pass
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True,
                             check=False).stdout
    except FileNotFoundError:
        return None
    for line in out.splitlines():
        if line.strip().startswith("libpam_wrapper.so") and "=>" in line:
            path = line.split("=>", 1)[1].strip()
            if os.path.exists(path):
                return path
    return None


def require_pam_wrapper():
    """Exit 77 (skip) unless pam_wrapper and the driver built on libpamtest
    are here; then the module must be too."""
    if wrapper_library() is None:
        print("SKIP: pam_wrapper (libpam_wrapper.so) is not installed")
        sys.exit(77)
    if not os.path.exists(LG_PAM):
        print("SKIP: tests/helpers/lg-pam was not built (libpamtest missing, or --disable-pam)")
        sys.exit(77)


def system_module(name):
    """A module of the system's PAM (pam_permit.so, ...) by absolute path."""
    for d in (SYSTEM_MODULES, "/lib/security", "/usr/lib/security",
              "/usr/lib/x86_64-linux-gnu/security"):
        path = os.path.join(d, name)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(name)


def unescape(text):
    """lg-pam's quoted text (\\n, \\", \\\\, \\xHH) back to a str."""
    out = bytearray()
    raw = text.encode("utf-8", "surrogateescape")
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == 0x5c and i + 1 < len(raw):
            nxt = raw[i + 1]
            if nxt == ord("n"):
                out.append(0x0a)
                i += 2
            elif nxt == ord("x"):
                out.append(int(raw[i + 2:i + 4], 16))
                i += 4
            else:
                out.append(nxt)
                i += 2
        else:
            out.append(c)
            i += 1
    return out.decode("utf-8", "surrogateescape")


class Step:
    """One PAM call: name (account, open, close), rc, ms, rc_name, and what
    it showed: messages [(kind, text)] in order, kind "info" or "error"."""

    def __init__(self, name, rc, ms, rc_name):
        self.name, self.rc, self.ms, self.rc_name = name, rc, ms, rc_name
        self.messages = []
        self.cgroups = []

    @property
    def infos(self):
        return [t for k, t in self.messages if k == "info"]

    @property
    def errors(self):
        return [t for k, t in self.messages if k == "error"]

    def cgroup(self, controller):
        """The path in a controller ("cpu", "memory"; "" for the v2 line)."""
        for line in self.cgroups:
            _, names, path = line.split(":", 2)
            if controller in names.split(",") or (controller == "" and names == ""):
                return path
        return None

    def __repr__(self):
        return f"<{self.name} {self.rc_name} {self.ms}ms {self.messages}>"


class Result:
    """What one lg-pam run printed: steps in order, fds_before/fds_after
    (with cycles), syslog [(priority, text)] from pam_syslog, and the raw
    returncode, stdout and stderr."""

    SYSLOG = re.compile(r"- SYSLOG\((\d+)\): (.*)$")

    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr
        self.steps = []
        self.fds_before = self.fds_after = None
        for line in stdout.splitlines():
            word, _, rest = line.partition(" ")
            if word in ("account", "open", "close"):
                rc, ms, name = rest.split(" ")
                self.steps.append(Step(word, int(rc), float(ms), name))
            elif word in ("info", "error"):
                assert rest.startswith('"') and rest.endswith('"'), line
                self.steps[-1].messages.append((word, unescape(rest[1:-1])))
            elif word == "cgroup":
                self.steps[-1].cgroups.append(rest)
            elif word == "fds_before":
                self.fds_before = int(rest)
            elif word == "fds_after":
                self.fds_after = int(rest)
            else:
                raise AssertionError(f"lg-pam printed an unknown line: {line!r}")
        self.syslog = []
        for line in stderr.splitlines():
            m = self.SYSLOG.search(line)
            if m:
                self.syslog.append((int(m.group(1)), m.group(2)))

    def step(self, name, index=0):
        """The index-th step of that name."""
        return [s for s in self.steps if s.name == name][index]

    def __repr__(self):
        return f"<lg-pam exit {self.returncode}: {self.steps} syslog {self.syslog}>"


class PamEnv:
    """A pam_wrapper service directory in workdir (made if None, removed
    by cleanup()); the module and lg-pam are copied there so that a test
    user may load and run them whatever the build tree's permissions."""

    def __init__(self, workdir=None, module=MODULE):
        self.own_workdir = workdir is None
        self.workdir = workdir or lgtest.make_workdir()
        self.dir = os.path.join(self.workdir, "pam.d")
        os.makedirs(self.dir, exist_ok=True)
        os.chmod(self.dir, 0o755)
        self.module = (lgtest.private_copy(module, self.workdir, "pam_loginguard.so")
                       if os.path.exists(module) else module)
        self.driver = lgtest.private_copy(LG_PAM, self.workdir, "lg-pam")
        self.wrapper = wrapper_library()
        # pam_wrapper copies the service directory to a /tmp/pam.X of its
        # own and removes it when the process ends, but not a copy made
        # in a launcher that execs (valgrind's): this file tells this
        # environment's copies from any other's, for forget_copies().
        self.marker = "lgtest-" + os.path.basename(self.workdir)
        open(os.path.join(self.dir, self.marker), "w").close()
        # Anything that falls through to "other" is refused, loudly.
        deny = system_module("pam_deny.so")
        self.service("other", [f"{t} required {deny}" for t in
                               ("auth", "account", "password", "session")])

    def service(self, name, lines):
        """DIR/name with these lines (PAM's "TYPE CONTROL MODULE ARGS")."""
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write("".join(line + "\n" for line in lines))
        os.chmod(path, 0o644)
        return path

    def module_service(self, name, options=(), account=True, session=True,
                       control="required"):
        """A service whose account and session stacks are the module alone
        with these options (each one word of the line)."""
        if not os.path.exists(self.module):
            raise AssertionError(f"the module is not built: {self.module} (make -C pam)")
        args = "".join(" " + o for o in options)
        lines = []
        if account:
            lines.append(f"account {control} {self.module}{args}")
        if session:
            lines.append(f"session {control} {self.module}{args}")
        return self.service(name, lines)

    def environment(self, extra=None):
        env = dict(os.environ)
        env.update({"PAM_WRAPPER": "1", "PAM_WRAPPER_SERVICE_DIR": self.dir,
                    "LD_PRELOAD": self.wrapper,
                    # 2 (debug) prints what modules give pam_syslog as
                    # "SYSLOG(PRIORITY): TEXT" on stderr, little else.
                    "PAM_WRAPPER_DEBUGLEVEL": "2"})
        if os.environ.get("LG_SANITIZERS"):
            # pam_wrapper is preloaded before ASan's runtime: allowed here.
            env["ASAN_OPTIONS"] = ":".join(filter(None, [
                os.environ.get("ASAN_OPTIONS", ""), "verify_asan_link_order=0"]))
            # pam_wrapper loads libpam with RTLD_DEEPBIND, which ASan
            # refuses; its switch for that still bears uid_wrapper's name.
            env["UID_WRAPPER_DISABLE_DEEPBIND"] = "1"
        env.update(extra or {})
        return env

    def run(self, service, user, *steps, silent=False, cycles=None, as_user=None,
            timeout=60, wrapper=(), env=None, check=True):
        """lg-pam SERVICE USER STEPS... (as as_user, a pwd entry, if given;
        under a wrapper command such as valgrind): a Result.  With check,
        the driver itself must have exited 0."""
        argv = list(wrapper) + [self.driver]
        if silent:
            argv.append("--silent")
        if cycles is not None:
            argv += ["--cycles", str(cycles)]
        argv += [service, user] + list(steps)

        def become():
            os.setgroups([])
            os.setresgid(as_user.pw_gid, as_user.pw_gid, as_user.pw_gid)
            os.setresuid(as_user.pw_uid, as_user.pw_uid, as_user.pw_uid)
        p = subprocess.run(argv, capture_output=True, timeout=timeout, cwd="/",
                           env=self.environment(env),
                           preexec_fn=become if as_user is not None else None)
        result = Result(p.returncode, p.stdout.decode("utf-8", "surrogateescape"),
                        p.stderr.decode("utf-8", "surrogateescape"))
        self.forget_copies()
        if check and p.returncode != 0:
            raise AssertionError(f"lg-pam {steps} exited {p.returncode}:\n{result.stderr}")
        return result

    def forget_copies(self):
        """Remove pam_wrapper's copies of this service directory that
        outlived their process."""
        for d in glob.glob("/tmp/pam.?"):
            if os.path.exists(os.path.join(d, self.marker)):
                shutil.rmtree(d, ignore_errors=True)

    def cleanup(self):
        if self.own_workdir and not os.environ.get("LG_KEEP"):
            shutil.rmtree(self.workdir, ignore_errors=True)
