"""Running a scenario in ns-2.35 and in ecnlab, and comparing the two.

``crosscheck_ns2`` checks that ns-2 can express the scenario (refusing with one line naming
the field), runs ecnlab, translates the scenario with ecnlab's bulk flows, runs ``ns`` on the
script, reads its outputs into ecnlab-shaped tables and compares the measures of both.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._scenario import ScenarioSource, load_scenario
from .compare import Comparison, compare, measures
from .translate import BulkFlow, Translation, check, translate

if TYPE_CHECKING:
    import pyarrow as pa

    from .._result import Result

__all__ = ["Crosscheck", "Ns2Error", "Ns2NotFound", "crosscheck_ns2", "find_ns", "run_ns2"]

SCRIPT = "scenario.tcl"
NS2_TABLES = ("exchanges", "flows", "links", "queue_counts", "queue_samples", "aqm_samples")
_STDERR_LINES = 12


class Ns2NotFound(RuntimeError):
    """No ``ns`` binary on the PATH."""


class Ns2Error(RuntimeError):
    """``ns`` failed: the message names the script and gives the end of ns's error output."""


@dataclass
class Crosscheck:
    """Both sides of one cross-check."""

    scenario: dict[str, Any]
    seed: int
    translation: Translation
    ecnlab: Result
    ns2: dict[str, pa.Table]
    ns2_measures: dict[str, float]
    ecnlab_measures: dict[str, float]
    comparison: Comparison
    ns2_wall_s: float

    @property
    def notes(self) -> list[str]:
        return self.translation.notes


def find_ns() -> str:
    """The path of ns-2's ``ns`` binary.

    Raises:
        Ns2NotFound: ``ns`` is not on the PATH.
    """
    path = shutil.which("ns")
    if path is None:
        raise Ns2NotFound(
            "ns-2 not found: the `ns` command is not on the PATH (Debian: apt-get install ns2)"
        )
    return path


def run_ns2(script: str, folder: Path, ns: str | None = None) -> float:
    """Write ``script`` to ``folder/scenario.tcl`` and run ``ns`` on it in ``folder``.

    Returns the wall time (s).

    Raises:
        Ns2NotFound: no ``ns``.
        Ns2Error: ``ns`` exited with an error or reported a Tcl error.
    """
    import time

    ns = ns or find_ns()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SCRIPT
    path.write_text(script)
    start = time.perf_counter()
    proc = subprocess.run(
        [ns, SCRIPT], cwd=folder, capture_output=True, text=True, errors="replace", check=False
    )
    wall = time.perf_counter() - start
    (folder / "ns.stdout").write_text(proc.stdout)
    (folder / "ns.stderr").write_text(proc.stderr)
    # ns-2 exits 0 after some Tcl errors raised inside event handlers: look for them too.
    failed = proc.returncode != 0 or "invoked from within" in proc.stderr
    if failed:
        # Tcl's error message comes first, then the stack of commands that invoked it.
        head = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[:_STDERR_LINES])
        raise Ns2Error(
            f"ns failed on {path} (exit status {proc.returncode}; its output is in "
            f"{folder}/ns.stderr): {head or 'no output'}"
        )
    return wall


def bulk_flows(result: Result) -> list[BulkFlow]:
    """The bulk flows ecnlab drew, from its ``flows`` table."""
    frame = result.flows.to_pandas()
    return [
        BulkFlow(
            flow=int(f.flow),
            workload=int(f.workload),
            client=int(f.client),
            server=int(f.server),
            start_s=float(f.start_s),
            rtt_ms=float(f.rtt_ms),
            rwnd_bytes=int(f.rwnd_bytes),
        )
        for f in frame.itertuples(index=False)
        if f.kind == "bulk"
    ]


def normalized(source: ScenarioSource, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The scenario with every default written out (what ``ecnlab validate`` prints).

    Raises:
        ValueError: the scenario is invalid (naming the field).
    """
    from .. import _core

    scenario = load_scenario(source, overrides)
    try:
        text = json.dumps(scenario, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValueError(f"scenario is not JSON-serializable: {e}") from None
    return json.loads(_core.normalize(text))


def crosscheck_ns2(
    source: ScenarioSource,
    seed: int = 1,
    out: Path | None = None,
    overrides: Sequence[str] = (),
    *,
    progress: bool | None = None,
) -> Crosscheck:
    """Run a scenario in ecnlab and in ns-2.35 and compare them.

    Args:
        source: a scenario file or dict.
        seed: the run seed of both (ns-2's RNG is seeded from it).
        out: a folder to write into (created; must not hold anything): ``ecnlab/`` (the run,
            as ``ecnlab run`` writes it), ``ns2/`` (the Tcl script, ns's raw outputs and its
            tables as Parquet), ``comparison.csv``, ``measures.json`` and ``notes.txt``.
            ``None``: a temporary folder, removed afterwards.
        overrides: ``path=value`` strings, as ``--set``.
        progress: ecnlab's progress bar (default: on a terminal).

    Raises:
        ValueError: the scenario is invalid.
        Untranslatable: ns-2.35 cannot express a field (the message names it).
        Ns2NotFound, Ns2Error: ``ns`` is missing or failed.
    """
    from .._run import run
    from .ns2tables import read_tables

    scenario = normalized(source, overrides)
    check(scenario)
    ns = find_ns()
    if out is not None:
        out = Path(out)
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise FileExistsError(f"{out} already exists and is not an empty folder")
    result = run(scenario, seed, progress=progress)
    flows = bulk_flows(result)
    translation = translate(scenario, seed, flows)
    with tempfile.TemporaryDirectory(prefix="ecnlab-ns2-") as tmp:
        folder = (out / "ns2") if out is not None else Path(tmp)
        wall = run_ns2(translation.script, folder, ns)
        tables = read_tables(folder, scenario, translation, {f.flow + 1: f.rtt_ms for f in flows})
        ns2_m = measures(tables, scenario)
        ecnlab_m = measures(result.tables, scenario)
        comparison = compare(ns2_m, ecnlab_m)
        check_ = Crosscheck(
            scenario=scenario,
            seed=seed,
            translation=translation,
            ecnlab=result,
            ns2=tables,
            ns2_measures=ns2_m,
            ecnlab_measures=ecnlab_m,
            comparison=comparison,
            ns2_wall_s=wall,
        )
        if out is not None:
            _write(check_, out, folder)
    return check_


def _write(check_: Crosscheck, out: Path, ns2_folder: Path) -> None:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    from ..store import write_parquet_table, write_run

    for name, table in check_.ns2.items():
        write_parquet_table(table, ns2_folder / f"{name}.parquet")
    write_run(check_.ecnlab, out / "ecnlab")
    records = check_.comparison.to_records()
    pcsv.write_csv(pa.Table.from_pylist(records), out / "comparison.csv")
    (out / "measures.json").write_text(
        json.dumps(
            {
                "seed": check_.seed,
                "ns2": _finite(check_.ns2_measures),
                "ecnlab": _finite(check_.ecnlab_measures),
                "ns2_wall_s": check_.ns2_wall_s,
            },
            indent=2,
        )
    )
    (out / "notes.txt").write_text("".join(f"{n}\n" for n in check_.notes))


def _finite(values: dict[str, float]) -> dict[str, float | None]:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in values.items()}
