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
import shutil
import subprocess
import time
from pathlib import Path

from .testbed import DATABASE_ADDRESS, Testbed, TestbedError

__all__ = ["DATABASES", "MariaDB", "check_installed"]

DATABASES = ("sqlite", "mariadb")
"""The testbed's database engines (``--database``); the first is the default."""
HOST = "db"
PORT = 3306
NAME = "tpcw"
INSTALL = "apt-get install -y mariadb-server"
_START_S = 60.0  # the most the server may take to accept connections
# The server's settings, for the install and the run alike. A private, throwaway server:
# no grant tables (only the testbed's namespaces reach it), no binary log, the redo log
# flushed once a second rather than at each commit (the seed's database was not the
# bottleneck; a commit waiting for a disk shared with the whole testbed would make it one).
_SETTINGS = ("--skip-name-resolve", "--innodb-buffer-pool-size=128M",
             "--innodb-log-file-size=16M")


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
        self.socket = self.dir / "mysqld.sock"
        self.proc: subprocess.Popen | None = None
        self.version = ""

    @property
    def url(self) -> str:
        """Where the web tiers reach it (``_testbed_web.Database.open``)."""
        return f"mariadb://{DATABASE_ADDRESS}:{PORT}/{NAME}"

    def local_url(self, name: str = NAME) -> str:
        """Database ``name`` on its Unix socket, for the testbed's own process (any
        namespace)."""
        return f"mariadb:///{name}?socket={self.socket}"

    def start(self) -> None:
        """Creates the datadir and starts the server; returns once it accepts connections."""
        data = self.dir / "data"
        data.mkdir(parents=True)
        install = [self.install, "--no-defaults", f"--datadir={data}", "--user=root",
                   "--auth-root-authentication-method=normal", "--skip-test-db", *_SETTINGS]
        if self.t is not None:
            self.t.run(HOST, install, timeout=_START_S)
        else:
            done = subprocess.run(install, capture_output=True, text=True, timeout=_START_S)
            if done.returncode != 0:
                raise TestbedError(f"mariadb-install-db: exit {done.returncode}: "
                                   f"{done.stderr.strip()[-500:]}")
        log = self.dir / "error.log"
        net = ([f"--bind-address={DATABASE_ADDRESS}", f"--port={PORT}"] if self.t is not None
               else ["--skip-networking"])
        argv = [self.server, "--no-defaults", f"--datadir={data}", "--user=root",
                f"--socket={self.socket}", f"--pid-file={self.dir / 'mariadbd.pid'}",
                f"--log-error={log}", f"--tmpdir={self.dir}", *net, "--skip-grant-tables",
                "--skip-log-bin", "--innodb-flush-log-at-trx-commit=2",
                "--performance-schema=OFF", "--max-connections=1000", *_SETTINGS]
        quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL,
                 "stderr": subprocess.DEVNULL}
        self.proc = (self.t.popen(HOST, argv, **quiet) if self.t is not None
                     else subprocess.Popen(argv, **quiet))
        import pymysql

        deadline = time.monotonic() + _START_S
        while True:
            if self.proc.poll() is not None:
                tail = log.read_text(errors="replace").strip().splitlines()[-5:] \
                    if log.exists() else []
                raise TestbedError(f"mariadbd exited with {self.proc.returncode}: "
                                   + " / ".join(tail))
            try:
                conn = pymysql.connect(unix_socket=str(self.socket), user="root")
                break
            except pymysql.err.OperationalError:
                if time.monotonic() > deadline:
                    raise TestbedError(f"mariadbd did not accept connections within "
                                       f"{_START_S:g} s (log: {log})") from None
                time.sleep(0.1)
        with conn.cursor() as cur:
            cur.execute("SELECT version()")
            self.version = cur.fetchone()[0]
        conn.close()

    def populate(self, seed: int | str, name: str = NAME) -> dict[str, int]:
        """The bookstore of ``seed`` (the SQLite bookstore's rows) as database ``name``;
        returns the row counts."""
        from ._testbed_web import Database, populate_database

        admin = Database.open(self.local_url(""))
        try:
            admin.execute(f"CREATE DATABASE {name}")
        finally:
            admin.close()
        db = Database.open(self.local_url(name))
        try:
            return populate_database(db, seed)
        finally:
            db.close()

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
