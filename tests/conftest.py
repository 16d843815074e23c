"""Shared fixtures: small real simulations (no mocks), run once per test session."""

from __future__ import annotations

import copy
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import ecnlab
import pyarrow as pa
import pytest
from ecnlab.cli import app
from typer.testing import CliRunner, Result

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

# A few seconds of a 10 Mb/s dumbbell with both TCP workloads and a short queue, so that
# every table has rows (drops included) and random RTTs make seeds matter.
SMALL: dict[str, Any] = {
    "name": "test-small",
    "duration_s": 3.0,
    "warmup_s": 0.5,
    "topology": {
        "clients": 2,
        "servers": 2,
        "bottleneck": {"rate_bps": 10e6, "delay_ms": 5, "queue": {"limit_pkts": 30}},
    },
    "workloads": [
        {"kind": "bulk", "flows": 2, "rtt_ms": {"dist": "uniform", "low": 20, "high": 60}},
        {
            "kind": "exchanges",
            "arrival_rate_per_s": 30,
            "response_bytes": {"dist": "lomax", "scale": 1720, "shape": 1.2, "max": 1e6},
            "rtt_ms": {"dist": "uniform", "low": 20, "high": 100},
        },
    ],
    "metrics": {"interval_s": 0.5},
}


@pytest.fixture
def small() -> dict[str, Any]:
    """A fresh copy of the small scenario, free to modify."""
    return copy.deepcopy(SMALL)


@pytest.fixture(scope="session")
def small_result() -> ecnlab.Result:
    """The small scenario run once with seed 1."""
    return ecnlab.run(copy.deepcopy(SMALL), seed=1, progress=False)


def table_values(table: pa.Table) -> dict[str, list[Any]]:
    """Column values with NaN replaced by a marker, so equal tables compare equal.

    (``pa.Table.equals`` treats NaN as unequal to itself, and ``end_s`` is NaN for
    unfinished exchanges.)
    """
    return {
        name: ["NaN" if isinstance(v, float) and math.isnan(v) else v for v in column]
        for name, column in table.to_pydict().items()
    }


def assert_tables_identical(a: dict[str, pa.Table], b: dict[str, pa.Table]) -> None:
    assert list(a) == list(b)
    for name, table in a.items():
        assert table.schema == b[name].schema, name
        assert table_values(table) == table_values(b[name]), name


# --- the command line ---------------------------------------------------------------

runner = CliRunner()


def invoke(*args: str) -> Result:
    return runner.invoke(app, list(args), catch_exceptions=False)


def assert_one_line_error(result: Result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert err.startswith("error:"), err
    assert "\n" not in err, f"not one line: {err!r}"
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in err, f"{fragment!r} not in {err!r}"


def apt_install(*packages: str) -> bool:
    """Installs Debian ``packages`` with apt-get when the tests run as root and apt-get is
    there (what a test needs from outside the package registries of pip and cargo); returns
    whether it ran. The caller checks what it needed afterwards and fails naming it."""
    if not shutil.which("apt-get") or os.geteuid() != 0:
        return False
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-q"], check=True, env=env, capture_output=True)
    subprocess.run(["apt-get", "install", "-y", "-q", *packages], check=True, env=env,
                   capture_output=True)
    return True


# --- ns-2.35 (the cross-validation's reference simulator) ---------------------------------


@pytest.fixture(scope="session")
def ns2() -> str:
    """The path of ns-2's ``ns``; the test setup installs Debian's ns2 package when it is
    missing and the tests run as root (as the report test does for Chromium)."""
    found = shutil.which("ns")
    if found is None and apt_install("ns2"):
        found = shutil.which("ns")
    if found is None:
        pytest.fail("ns-2.35 is needed (Debian: apt-get install -y ns2)")
    return found


# --- MariaDB (the testbed's optional database tier) ----------------------------------------


@pytest.fixture(scope="session")
def mariadb_installed() -> None:
    """Debian's MariaDB server (``mariadbd``, ``mariadb-install-db``) and PyMySQL, for the
    tests of ``--database mariadb``: skipped without root (as the testbed is); as root the
    setup installs the mariadb-server package when it is missing (as for ns-2)."""
    from ecnlab._testbed_mariadb import INSTALL, check_installed
    from ecnlab.testbed import TestbedError

    if os.geteuid() != 0:
        pytest.skip("the MariaDB tier runs as root (the testbed needs root)")
    try:
        check_installed()
        return
    except TestbedError:
        pass
    apt_install("mariadb-server")
    try:
        check_installed()
    except TestbedError as e:
        pytest.fail(f"MariaDB is needed ({INSTALL}; PyMySQL: pip install '.[test]'): {e}")


@pytest.fixture(scope="session")
def mariadb_server(mariadb_installed, tmp_path_factory):
    """A private MariaDB server on a Unix socket (no testbed), stopped after the session."""
    from ecnlab._testbed_mariadb import MariaDB

    server = MariaDB(None, tmp_path_factory.mktemp("mdb"))
    try:
        server.start()
        yield server
    finally:
        server.stop()


def interruptible_process(argv: list[str], **kwargs: Any) -> subprocess.Popen[str]:
    """``subprocess.Popen(argv, **kwargs)`` as a child that a test can interrupt with SIGINT.

    A test runner started in the background (``pytest &``) has SIGINT ignored, and a child
    inherits an ignored signal across exec: for the spawn, SIGINT gets a handler (which exec
    resets to the default in the child), then the runner's own disposition is restored."""
    runner = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(argv, **kwargs)
    finally:
        signal.signal(signal.SIGINT, runner)


def ecnlab_process(*args: str) -> subprocess.Popen[str]:
    """``python -m ecnlab ARGS`` as a real child process that a test can interrupt with SIGINT
    (:func:`interruptible_process`)."""
    return interruptible_process(
        [sys.executable, "-m", "ecnlab", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


def wait_for_cpu_seconds(proc: subprocess.Popen[str], seconds: float) -> None:
    """Wait until ``proc`` has used ``seconds`` of CPU (Linux's /proc), so that a loaded
    machine, which slows its imports, does not interrupt it before they are done; elsewhere
    wait that long in wall time."""
    stat = Path(f"/proc/{proc.pid}/stat")
    if not stat.exists():
        time.sleep(seconds)
        return
    tick = os.sysconf("SC_CLK_TCK")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        fields = stat.read_text().rsplit(")", 1)[1].split()
        if (int(fields[11]) + int(fields[12])) / tick >= seconds:  # utime + stime
            return
        time.sleep(0.1)
