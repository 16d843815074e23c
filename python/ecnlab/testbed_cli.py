"""``ecnlab testbed``: run a scenario on real Linux TCP stacks (run), or hold its network up for
interactive use (up) and take testbeds down (down). docs/testbed.md.

No ``from __future__ import annotations``: typer reads the annotations at run time.
"""
import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from ._cli_common import EXIT_FAILED, command_group, err_console, fail, out_console, reported
from .store import RunExistsError

if TYPE_CHECKING:
    from .testbed import Testbed

# The testbed's modules load inside the commands, so that the command line does not import
# them for its other commands (issue 21, the fixed cost of `ecnlab run`).

__all__ = ["STATE_DIR", "DatabaseOpt", "testbed_app"]

testbed_app = command_group(
    "testbed", "Run a scenario on real Linux TCP through ecnlab's router (root; docs/testbed.md)."
)

STATE_DIR = Path(os.environ.get("ECNLAB_TESTBED_STATE", "/run/ecnlab-testbed"))
"""One file per live testbed of ``run`` or ``up``: its holder's pid and namespaces."""

ScenarioArg = Annotated[Path, typer.Argument(help="Scenario TOML file.", show_default=False)]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="Seed of the draws (RTTs, "
                                      "arrivals, sizes) and of the router's AQM.")]
DatabaseOpt = Annotated[
    str,
    typer.Option("--database", metavar="[sqlite|mariadb]",
                 help="The TPC-W bookstore's database: sqlite (one file per server host) or "
                 "mariadb (one private MariaDB server in its own host on the servers' side; "
                 "Debian's mariadb-server package and PyMySQL: pip install 'ecnlab[mariadb]')."),
]
SetsOpt = Annotated[
    Optional[list[str]],
    typer.Option("--set", "-s", metavar="PATH=VALUE", show_default=False,
                 help="Override a scenario field, e.g. topology.bottleneck.rate_bps=10e6."),
]


@testbed_app.command("run")
def run_cmd(
    scenario: ScenarioArg,
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write the run to.")],
    seed: SeedOpt = 1,
    sets: SetsOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a run already in --out.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    database: DatabaseOpt = "sqlite",
) -> None:
    """Run SCENARIO for its duration_s on the testbed and write the simulator's tables and a
    manifest marked "mode": "testbed" to --out. Fields the testbed cannot honour are refused."""
    from .testbed import TestbedError
    from .testbed_run import run_testbed

    try:
        with reported(scenario, errors=(ValueError,)):
            written = run_testbed(scenario, out, seed, overrides=tuple(sets or ()), force=force,
                                  progress=False if quiet else None, on_up=_register,
                                  database=database)
    except RunExistsError as e:
        fail(f"{out} already holds a run; use --force to replace it" if e.replaceable else str(e))
    except (TestbedError, OSError) as e:
        fail(f"{scenario}: {e}", EXIT_FAILED)
    finally:
        _unregister()
    if not quiet:
        out_console.print(f"testbed run written to {written}")


@testbed_app.command("up")
def up_cmd(scenario: ScenarioArg, seed: SeedOpt = 1, sets: SetsOpt = None) -> None:
    """Build SCENARIO's namespaces, router and TCP settings and hold them until Ctrl-C or
    `ecnlab testbed down`; run your own programs in them with `ip netns exec NAME ...`."""
    from ._testbed_plan import plan
    from .testbed import TestbedError
    from .testbed_run import build_testbed, set_routes

    try:
        with reported(scenario, errors=(OSError, ValueError)), contextlib.ExitStack() as stack:
            p = plan(scenario, seed, tuple(sets or ()))
            if os.geteuid() != 0:
                raise TestbedError("the testbed needs root (network namespaces)")
            # The router's output lives as long as the testbed.
            work = stack.enter_context(tempfile.TemporaryDirectory(prefix="ecnlab-testbed-up-"))
            with build_testbed(p, Path(work)) as t:
                set_routes(t, p)
                _register(t)
                for h in t.clients + t.servers:
                    out_console.print(f"{h}  {t.address(h):<11} ip netns exec {t.ns(h)} ...")
                out_console.print(f"router: namespace {t.ns('r')}, samples in {t.samples_path}")
                out_console.print("up; Ctrl-C or `ecnlab testbed down` takes it down")
                while True:
                    time.sleep(3600)
    except TestbedError as e:
        fail(f"{scenario}: {e}", EXIT_FAILED)
    finally:
        _unregister()


@testbed_app.command("down")
def down_cmd(
    all_: Annotated[bool, typer.Option("--all", help="Also delete ecnlab-* namespaces whose "
                                       "holder is gone (after a kill -9), with their "
                                       "processes, and unregister ecnlab's BPF congestion "
                                       "controls no live testbed holds.")] = False,
) -> None:
    """Take down every testbed of `ecnlab testbed up` or `run` on this machine (each holder
    gets SIGTERM and tears its testbed down)."""
    from . import _testbed_bpf
    from .testbed import leftover_namespaces

    if os.geteuid() != 0:
        fail("the testbed needs root (network namespaces)")
    stopped = []
    for state in sorted(STATE_DIR.glob("*.json")) if STATE_DIR.is_dir() else []:
        with contextlib.suppress(OSError, ValueError):
            info = json.loads(state.read_text())
            if _alive(info["pid"]):
                os.kill(info["pid"], signal.SIGTERM)
                stopped.append(info)
            else:
                state.unlink()
    deadline = time.monotonic() + 15
    for info in stopped:
        while leftover_namespaces(info["prefix"]) and time.monotonic() < deadline:
            time.sleep(0.1)
        out_console.print(f"stopped {info['prefix']}* (pid {info['pid']})")
    if all_:
        for ns in orphaned_namespaces():
            for pid in subprocess.run(["ip", "netns", "pids", ns], capture_output=True,
                                      text=True, check=False).stdout.split():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
            subprocess.run(["ip", "netns", "del", ns], check=False)
            out_console.print(f"deleted {ns}")
        # ecnlab's BPF congestion controls whose holders are all gone (docs/testbed.md).
        for name in _testbed_bpf.release_orphans():
            out_console.print(f"unregistered {name}")
    left = leftover_namespaces()
    if left:
        err_console.print(f"still up: {' '.join(left)}" + ("" if all_ else " (try --all)"))


def orphaned_namespaces() -> list[str]:
    """``ecnlab-<pid>-...`` namespaces whose process ``pid`` is gone."""
    from .testbed import leftover_namespaces

    out = []
    for ns in leftover_namespaces():
        pid = ns.split("-")[1].split(".")[0]
        if pid.isdigit() and not _alive(int(pid)):
            out.append(ns)
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _register(t: "Testbed") -> None:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    (STATE_DIR / f"{os.getpid()}.json").write_text(
        json.dumps({"pid": os.getpid(), "prefix": t.prefix}))


def _unregister() -> None:
    with contextlib.suppress(OSError):
        (STATE_DIR / f"{os.getpid()}.json").unlink()
