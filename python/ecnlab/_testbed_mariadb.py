"""The testbed's MariaDB database tier (``ecnlab testbed run --database mariadb``).

Seed 000's testbed (section 7; seed 003) served its bookstore from "a web-server tier and a
database tier": Apache web servers and one MySQL server. With ``--database mariadb`` the
testbed runs Debian's MariaDB (``mariadbd`` from the ``mariadb-server`` package, standing in
for the seed's MySQL) as that one server, in its own host ``db`` on the servers' side
(``Testbed(database_host=True)``): a private server with its datadir in the run's temporary
folder (``mariadb-install-db``), listening on the db host's address, filled with the same rows
as the SQLite bookstore of the same seed (``_testbed_web.populate_database``, one code path),
and stopped with the testbed (it is a process of the testbed's namespaces; its files go with the
temporary folder). docs/testbed.md, "The TPC-W workload".
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

from .testbed import DATABASE_ADDRESS, Testbed, TestbedError

__all__ = ["DATABASES", "MariaDB", "check_engine", "check_installed"]

DATABASES = ("sqlite", "mariadb")
"""The testbed's database engines (``--database``); the first is the default."""
HOST = "db"
PORT = 3306
NAME = "tpcw"
INSTALL = "apt-get install -y mariadb-server"
AGENT = Path(__file__).with_name("_testbed_agent.py")
_START_S = 60.0  # the most the server may take to accept connections
# The server's settings for the install and the run alike (a 10 MB store fits the pool).
_SETTINGS = ("--skip-name-resolve", "--innodb-buffer-pool-size=128M",
             "--innodb-log-file-size=16M")


def check_engine(database: str) -> None:
    """``--database``: one of :data:`DATABASES` (ValueError naming the choices)."""
    if database not in DATABASES:
        raise ValueError(f"--database {database}: must be one of {', '.join(DATABASES)}")


def _which(name: str) -> str | None:
    # Debian puts mariadbd in /usr/sbin, which a user's PATH may lack.
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin")


def check_installed() -> tuple[str, str]:
    """The paths of ``mariadbd`` and ``mariadb-install-db``, and that PyMySQL imports; the
    error says what to install."""
    server = _which("mariadbd") or _which("mysqld")
    install = _which("mariadb-install-db") or _which("mysql_install_db")
    if server is None or install is None:
        raise TestbedError(
            "--database mariadb: MariaDB is not installed (no mariadbd and mariadb-install-db "
            f"found); it is Debian's mariadb-server package: {INSTALL}")
    if importlib.util.find_spec("pymysql") is None:
        raise TestbedError(
            "--database mariadb: the web tier's MariaDB client, PyMySQL, is not installed: "
            "pip install 'ecnlab[mariadb]' (or pip install PyMySQL)")
    return server, install


class MariaDB:
    """One private MariaDB server in host ``db`` of testbed ``t``, its files under ``work``;
    without a testbed (tests), in this namespace and on its Unix socket only."""

    def __init__(self, t: Testbed | None, work: Path) -> None:
        self.server, self.install = check_installed()
        self.t = t
        self.dir = work / "mariadb"
        self.socket = self.dir / "data" / "mysqld.sock"
        self.log = self.dir / "error.log"
        self.proc: subprocess.Popen | None = None
        self.version = ""

    @property
    def url(self) -> str:
        """Where the web tiers reach it (``_testbed_web.Database.open``)."""
        return f"mariadb://{DATABASE_ADDRESS}:{PORT}/{NAME}"

    def local_url(self, name: str = NAME) -> str:
        """Database ``name`` on its Unix socket (without a testbed: tests)."""
        return f"mariadb:///{name}?socket={self.socket}"

    def start(self) -> None:
        """Creates the datadir and starts the server (:meth:`populate` waits for it)."""
        data = self.dir / "data"
        data.mkdir(parents=True)
        # Its temporary tables in the run's folder too (not $TMPDIR): an install cut short
        # by a signal leaves them there, deleted with the folder.
        install = [self.install, "--no-defaults", f"--datadir={data}", "--user=root",
                   "--auth-root-authentication-method=normal", "--skip-test-db",
                   f"--tmpdir={self.dir}", *_SETTINGS]
        self._run(install, "mariadb-install-db")
        net = ([f"--bind-address={DATABASE_ADDRESS}", f"--port={PORT}"] if self.t is not None
               else ["--skip-networking"])
        # The socket's path relative to the datadir (the server's working folder): a temporary
        # folder's absolute path may pass the 107 bytes a Unix socket's path may have.
        # A private, throwaway server: no grant tables (only the testbed's namespaces reach
        # it), no binary log, the redo log flushed once a second rather than at each commit
        # (the seed's database was not the bottleneck; a commit waiting for a disk shared
        # with the whole testbed could make it one).
        argv = [self.server, "--no-defaults", f"--datadir={data}", "--user=root",
                f"--socket={self.socket.name}", f"--pid-file={self.dir / 'mariadbd.pid'}",
                f"--log-error={self.log}", f"--tmpdir={self.dir}", *net, "--skip-grant-tables",
                "--skip-log-bin", "--innodb-flush-log-at-trx-commit=2",
                "--performance-schema=OFF", "--max-connections=1000", *_SETTINGS]
        quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL,
                 "stderr": subprocess.DEVNULL}
        self.proc = (self.t.popen(HOST, argv, **quiet) if self.t is not None
                     else subprocess.Popen(argv, **quiet))

    def populate(self, seed: int | str, name: str = NAME) -> dict[str, int]:
        """The bookstore of ``seed`` (the SQLite bookstore's rows) as database ``name``, once
        the server accepts connections; returns the row counts. Run in the database's host
        (over TCP, as the web tiers reach it) by the agent's ``populate``."""
        url = self.url.replace(f"/{NAME}", f"/{name}") if self.t is not None \
            else self.local_url(name)
        out = self._run([sys.executable, str(AGENT), "populate", url, str(seed)], "populate")
        got = json.loads(out.strip().splitlines()[-1])
        self.version = got["version"]
        return got["rows"]

    def _run(self, argv: list[str], what: str) -> str:
        """Runs ``argv`` in the database's host (or here, without a testbed); its stdout.
        A failure names the server's last log lines."""
        try:
            if self.t is not None:
                done = self.t.run(HOST, argv, timeout=_START_S + 30, check=False)
            else:
                done = subprocess.run(argv, capture_output=True, text=True,
                                      timeout=_START_S + 30, check=False)
        except subprocess.TimeoutExpired:
            done = subprocess.CompletedProcess(argv, "timeout", "", "")
        if done.returncode != 0:
            log = self.log.read_text(errors="replace").strip().splitlines()[-4:] \
                if self.log.exists() else []
            err = done.stderr.strip().splitlines()[-1:] if done.stderr else []
            raise TestbedError(f"MariaDB {what}: exit {done.returncode}: "
                               + " / ".join(err + log))
        return done.stdout

    def stop(self, timeout: float = 20.0) -> None:
        """A clean shutdown (SIGTERM); the testbed's teardown kills it otherwise."""
        p, self.proc = self.proc, None
        if p is None or p.poll() is not None:
            return
        p.terminate()
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def pids(under: str = "") -> list[int]:
    """The pids of the ``mariadbd`` processes whose command line names ``under`` (a folder of
    their datadir; tests: none is left by a run)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "comm").read_text().strip() in ("mariadbd", "mysqld") and \
                        under in (d / "cmdline").read_text(errors="replace"):
                    out.append(int(d.name))
            except OSError:
                continue
    return out
