"""A real PostgreSQL 15 server for the cluster tests, private to one test
class: its own data directory in a fresh temporary directory, run as the
`postgres` system user, listening only on a unix socket in that directory
(no TCP at all), fsync off.  It holds the database `loginguard`, owned by
OWNER (the role that runs `loginguardctl cluster init`), and the role NODE
that a login node connects as, with no rights but those init --grant gives
it.  Both log in with a password (scram-sha-256); the superuser `postgres`
only through peer authentication, as the postgres system user.

    server = PgServer()          # initdb, start, roles and database
    PgServer(settings={"max_connections": 80})  # postgresql.conf lines added
    server.conninfo(OWNER)       # a libpq connection string, password in a passfile
    server.psql("select 1")      # as the superuser; user=NODE to act as a node
    server.psql_session()        # psql on a pipe: a session holding a lock
    server.stop("immediate"); server.start()   # a crash, and back
    server.teardown()            # always: stops the server, removes the directory

Start (initdb, pg_ctl start, roles and database) took 1.35 to 2.0 s on the
2-core build machine alone, 3.6 s with a build beside it; `started_in` holds
each run's figure.  A restart (start() after stop("immediate"), crash
recovery included) took 0.14 s, an immediate stop 0.02 s."""

import atexit
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time

PG_BIN = "/usr/lib/postgresql/15/bin"
OWNER = "lgowner"
NODE = "lgnode"
DATABASE = "loginguard"
PORT = 5432             # only names the socket file: nothing listens on TCP
# Hang guards, never figures: a run that works takes what it takes.
START_TIMEOUT = 60      # s, pg_ctl -w -t
PSQL_TIMEOUT = 60       # s, one psql run
PREFIX = "lgtest.pg."


def available():
    """Whether this machine can run the server at all (the tests skip otherwise)."""
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return False
    return all(os.access(os.path.join(PG_BIN, b), os.X_OK)
               for b in ("initdb", "pg_ctl", "postgres", "psql"))


def remove_stale():
    """Servers an earlier run left behind (killed before its teardown):
    stopped by their own data directory, and their directories removed.
    Tests hold the global test lock, so no live run owns one."""
    for d in glob.glob(os.path.join(tempfile.gettempdir(), PREFIX + "*")):
        data = os.path.join(d, "data")
        if os.path.exists(os.path.join(data, "postmaster.pid")):
            _as_postgres([os.path.join(PG_BIN, "pg_ctl"), "-D", data, "-m", "immediate",
                          "-w", "-t", str(START_TIMEOUT), "stop"], check=False)
        shutil.rmtree(d, ignore_errors=True)


def _become_postgres():
    pw = pwd.getpwnam("postgres")
    os.setgroups([])
    os.setresgid(pw.pw_gid, pw.pw_gid, pw.pw_gid)
    os.setresuid(pw.pw_uid, pw.pw_uid, pw.pw_uid)


def _as_postgres(argv, check=True, env=None, timeout=PSQL_TIMEOUT, input=None):
    """argv run as the postgres system user; its output, or CalledProcessError
    with what it said."""
    run_env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/nonexistent"}
    run_env.update(env or {})
    p = subprocess.run(argv, preexec_fn=_become_postgres, cwd="/", env=run_env,
                       capture_output=True, text=True, timeout=timeout, input=input)
    if check and p.returncode != 0:
        raise subprocess.CalledProcessError(p.returncode, argv, p.stdout, p.stderr)
    return p


class PgServer:
    def __init__(self, passwords=None, settings=None):
        """settings: postgresql.conf parameters (name: value, the value
        as the file spells it, quotes included) set after the defaults
        below, so that they override them."""
        remove_stale()
        self.settings = dict(settings or {})
        t0 = time.monotonic()
        self.dir = tempfile.mkdtemp(prefix=PREFIX)
        self.data = os.path.join(self.dir, "data")
        self.running = False
        atexit.register(self.teardown)
        pw = pwd.getpwnam("postgres")
        os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        os.chmod(self.dir, 0o755)  # the socket in it, for every test user
        self.log = os.path.join(self.dir, "server.log")
        self.passwords = passwords or {OWNER: "owner-secret-1", NODE: "node-secret-2"}
        self.passfile = os.path.join(self.dir, "pgpass")  # root's: the tools run as root
        try:
            self._initdb()
            self.start()
            self._make_roles()
        except BaseException:
            self.teardown()
            raise
        self.started_in = time.monotonic() - t0

    # -------------------------------------------------------------- setup

    def _initdb(self):
        _as_postgres([os.path.join(PG_BIN, "initdb"), "-D", self.data, "-U", "postgres",
                      "-E", "UTF8", "--locale=C.UTF-8", "--auth-local=peer",
                      "--auth-host=reject", "--no-sync"], timeout=120)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"""
# The test server: a unix socket in its own directory, nothing on TCP.
# fsync off: a stop("immediate") kills processes, not the machine, so
# what was committed is still in the kernel's cache (synchronous_commit
# stays on: off, an immediate stop loses the last commits).
listen_addresses = ''
unix_socket_directories = '{self.dir}'
port = {PORT}
fsync = off
full_page_writes = off
shared_buffers = 16MB
max_connections = 40
log_min_messages = warning
""")
            f.write("".join(f"{k} = {v}\n" for k, v in self.settings.items()))
        # The superuser by peer only; every other role by its password.
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:
            f.write("local all postgres peer\n"
                    "local all all scram-sha-256\n")

    def _make_roles(self):
        for role, password in self.passwords.items():
            self.psql(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'", dbname="postgres")
        self.psql(f"CREATE DATABASE {DATABASE} OWNER {OWNER}", dbname="postgres")
        with open(self.passfile, "w") as f:
            os.fchmod(f.fileno(), 0o600)
            for role, password in self.passwords.items():
                f.write(f"{self.dir}:{PORT}:*:{role}:{password}\n")

    # -------------------------------------------------------------- use

    def conninfo(self, role=OWNER, password="passfile", dbname=DATABASE):
        """A libpq connection string for role: with password="passfile" the
        password is in self.passfile (0600, root's), with "inline" in the
        string itself, with any other text that text (a wrong one, say)."""
        s = f"host={self.dir} port={PORT} dbname={dbname} user={role}"
        if password == "passfile":
            return s + f" passfile={self.passfile}"
        if password == "inline":
            return s + f" password={self.passwords[role]}"
        return s + f" password={password}"

    def psql(self, sql, user="postgres", dbname=DATABASE, check=True):
        """sql run by psql over the socket as user (the superuser by
        default): its rows, one a line, fields split by '|' (psql -At).
        With check=False, the CompletedProcess (an error is its stderr)."""
        env = {"PGPASSWORD": self.passwords[user]} if user in self.passwords else {}
        p = _as_postgres([os.path.join(PG_BIN, "psql"), "-X", "-q", "-At",
                          "-v", "ON_ERROR_STOP=1", "-h", self.dir, "-p", str(PORT),
                          "-U", user, "-d", dbname, "-f", "-"],
                         check=False, env=env, input=sql)
        if not check:
            return p
        if p.returncode != 0:
            raise AssertionError(f"psql as {user} failed ({p.returncode}): {p.stderr}"
                                 f"the statement:\n{sql}")
        return p.stdout

    def psql_session(self, user="postgres", dbname=DATABASE):
        """psql reading statements from its stdin (a pipe, text) as they
        are written: a session that holds a lock while a test acts.  The
        caller closes its stdin and waits for it."""
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/nonexistent"}
        if user in self.passwords:
            env["PGPASSWORD"] = self.passwords[user]
        return subprocess.Popen([os.path.join(PG_BIN, "psql"), "-X", "-q", "-At",
                                 "-v", "ON_ERROR_STOP=1", "-h", self.dir, "-p", str(PORT),
                                 "-U", user, "-d", dbname],
                                preexec_fn=_become_postgres, cwd="/", env=env, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, bufsize=1)

    def start(self):
        t0 = time.monotonic()
        p = _as_postgres([os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-l", self.log,
                          "-w", "-t", str(START_TIMEOUT), "start"], check=False,
                         timeout=START_TIMEOUT + 10)
        if p.returncode != 0:
            raise AssertionError(f"pg_ctl start failed: {p.stdout}{p.stderr}"
                                 f"the server's log:\n{self.log_text()}")
        self.running = True
        self.restarted_in = time.monotonic() - t0

    def stop(self, mode="fast"):
        """mode: smart, fast or immediate (a crash: no shutdown checkpoint)."""
        if not self.running:
            return
        p = _as_postgres([os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-m", mode,
                          "-w", "-t", str(START_TIMEOUT), "stop"], check=False,
                         timeout=START_TIMEOUT + 10)
        if p.returncode != 0:
            raise AssertionError(f"pg_ctl stop failed: {p.stdout}{p.stderr}")
        self.running = False

    def teardown(self):
        """Stop the server (whatever state it is in) and remove its
        directory; safe to call twice, and called at exit in any case."""
        if not getattr(self, "dir", None):
            return
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            _as_postgres([os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-m", "immediate",
                          "-w", "-t", str(START_TIMEOUT), "stop"], check=False,
                         timeout=START_TIMEOUT + 10)
        self.running = False
        if os.environ.get("LG_KEEP"):
            print(f"kept the PostgreSQL test directory {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None

    def log_text(self):
        try:
            with open(self.log) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.teardown()
