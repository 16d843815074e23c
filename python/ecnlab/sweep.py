"""Sweeps: many runs of one scenario, defined in one TOML file, run locally or on Dask.

A sweep file names a base scenario and how to vary it (``docs/sweeps.md``)::

    base = "../web-dumbbell.toml"    # relative to this file
    seeds = [1, 2]                   # or a count: seeds = 3 means 1, 2, 3

    [set]                            # fixed overrides of the base
    duration_s = 20

    [[axes]]
    name = "load"                    # no path: the axis only feeds derived settings
    values = [0.5, 0.9, 1.05]
    labels = ["50%", "90%", "105%"]  # optional

    [[axes]]
    name = "buffer"
    path = "topology.bottleneck.queue.limit_pkts"
    values = [30, 250]

    [derived]                        # path = expression (safe arithmetic, ``_expr``)
    "workloads.0.arrival_rate_per_s" = "load * topology.bottleneck.rate_bps / 8 / 7198"

    [reference]                      # optional: the uncongested reference runs
    vary = ["load"]
    set = { "topology.bottleneck.rate_bps" = 1e9 }

Each run's scenario is built as base, then ``[set]``, then the axes in order, then
``[derived]`` in order (an expression sees everything before it), then, for reference runs,
``[reference].set``. Every scenario is normalized by the core before anything runs, so a bad
path or value stops the sweep up-front with a message naming the axis and the field.

Runs go through a ``concurrent.futures``-shaped executor: a process pool (local backend) or a
``distributed`` client (Dask backend). Each run lands in ``DIR/runs/<run_id>/`` by the atomic
:func:`ecnlab.store.write_run`: local workers, on the store's machine, write their own runs
(:func:`simulate_and_store`); Dask workers only simulate and this process writes their results,
so they need no shared file system. The lock on ``DIR`` is this process's (one sweep at a time
writes a folder). A run already stored is skipped; a run that raises is
recorded in ``DIR/errors/<run_id>.json`` and the others go on; a run whose worker dies is
retried (local: up to ``retries`` times; Dask: by the scheduler's own retry policy).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import errno
import itertools
import json
import math
import multiprocessing
import sys
import time
import traceback
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from . import _core, store
from ._expr import ExpressionError, evaluate
from ._load import resolve_load
from ._result import Result, run_id
from ._run import memory_budget_bytes, run
from ._scenario import _read_toml, scenario_json, set_path

__all__ = [
    "Axis",
    "DiskFullError",
    "Reference",
    "RunSpec",
    "Sweep",
    "SweepError",
    "SweepReport",
    "load_sweep",
    "run_sweep",
    "run_sweeps",
    "sweep_from_dict",
]

BACKENDS = ("local", "dask")
MAX_RUNS = 100_000
"""Most runs in one sweep: each is a folder of nine files, and the sweep holds every run's
scenario in memory while it expands and checks them (about 10 kB each)."""
_TOP_KEYS = {"name", "base", "seeds", "set", "axes", "derived", "reference"}
_AXIS_KEYS = {"name", "path", "values", "labels"}
_REFERENCE_KEYS = {"label", "vary", "set"}
_RESERVED = {"run_id", "seed", "reference", "status", "error"}


class SweepError(ValueError):
    """A sweep file is malformed, or one of its scenarios is invalid."""


class DiskFullError(OSError):
    """A run could not be stored for want of disk space, so the sweep stopped starting runs
    (:func:`run_sweeps`)."""


# Errors of a run's storing after which the next runs could not be stored either.
_DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


@dataclass(frozen=True)
class Axis:
    """One dimension of a sweep: a name, its values and their labels, and where it goes."""

    name: str
    values: tuple[Any, ...]
    labels: tuple[str, ...]
    path: str | None = None


@dataclass(frozen=True)
class Reference:
    """The uncongested (or otherwise reference) runs drawn beside the others in plots."""

    label: str
    vary: tuple[str, ...]
    set: Mapping[str, Any]


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: its normalized scenario, seed, id and axis coordinates.

    ``axes`` and ``labels`` map each axis name to this run's value and label; for a
    reference run, the axes it does not vary map to None.
    """

    run_id: str
    seed: int
    scenario: dict[str, Any]
    axes: dict[str, Any]
    labels: dict[str, str | None]
    reference: bool = False

    def record(self) -> dict[str, Any]:
        """The entry written to ``sweep.json`` (everything but the scenario)."""
        return {
            "run_id": self.run_id,
            "seed": self.seed,
            "reference": self.reference,
            "axes": self.axes,
            "labels": self.labels,
        }


@dataclass(frozen=True)
class Sweep:
    """A parsed sweep file. :meth:`runs` expands and validates it."""

    name: str
    path: Path
    base: Path
    base_scenario: dict[str, Any]
    seeds: tuple[int, ...]
    axes: tuple[Axis, ...]
    set: Mapping[str, Any] = field(default_factory=dict)
    derived: Mapping[str, str] = field(default_factory=dict)
    reference: Reference | None = None
    definition: Mapping[str, Any] = field(default_factory=dict)

    def runs(self) -> list[RunSpec]:
        """Every run of the sweep (axes product x seeds, then the reference runs).

        Each scenario is normalized by the core, so an invalid one raises here, before
        anything runs.

        Raises:
            SweepError: naming the sweep file, the axis values and the field at fault.
        """
        self.check_size()
        specs: list[RunSpec] = []
        for combo in itertools.product(*(range(len(a.values)) for a in self.axes)):
            specs.extend(self._specs(combo, reference=False))
        if self.reference is not None:
            vary = set(self.reference.vary)
            combos = itertools.product(
                *(range(len(a.values)) if a.name in vary else [0] for a in self.axes)
            )
            for combo in combos:
                specs.extend(self._specs(combo, reference=True))
        return specs

    def size(self) -> int:
        """How many runs :meth:`runs` gives, counted without expanding them."""
        points = math.prod(len(a.values) for a in self.axes)
        if self.reference is not None:
            vary = set(self.reference.vary)
            points += math.prod(len(a.values) for a in self.axes if a.name in vary)
        return points * len(self.seeds)

    def check_size(self) -> None:
        """Refuse a sweep of more than :data:`MAX_RUNS` runs before expanding it.

        Raises:
            SweepError: naming the axes' sizes and the seeds.
        """
        n = self.size()
        if n > MAX_RUNS:
            sizes = " x ".join(f"{a.name} ({len(a.values)})" for a in self.axes) or "no axes"
            raise SweepError(
                f"{self.path}: {sizes} x seeds ({len(self.seeds)}) is {n} runs, more than "
                f"{MAX_RUNS} (each run is a folder, and every scenario is held in memory "
                "while the sweep is checked); split the sweep"
            )

    def describe(self) -> dict[str, Any]:
        """The definition as written to ``sweep.json``: the sweep file's contents and the
        base scenario they build on."""
        return {
            "name": self.name,
            "sweep_file": str(self.path),
            "base": str(self.base),
            "base_scenario": self.base_scenario,
            "axes": [
                {"name": a.name, "path": a.path, "values": list(a.values), "labels": list(a.labels)}
                for a in self.axes
            ],
            "reference_label": self.reference.label if self.reference else None,
            "definition": dict(self.definition),
        }

    def _specs(self, combo: tuple[int, ...], *, reference: bool) -> Iterator[RunSpec]:
        values = {a.name: a.values[i] for a, i in zip(self.axes, combo)}
        where = ", ".join(f"{a.name}={a.labels[i]}" for a, i in zip(self.axes, combo))
        scenario = self._build(values, where, reference=reference)
        try:
            normalized = json.loads(_core.normalize(scenario_json(scenario)))
        except ValueError as e:
            raise SweepError(f"{self.path}: run with {where or 'no axes'}: {e}") from None
        shown = set(self.reference.vary) if reference and self.reference else None
        axes = {k: (v if shown is None or k in shown else None) for k, v in values.items()}
        labels = {
            a.name: (a.labels[i] if shown is None or a.name in shown else None)
            for a, i in zip(self.axes, combo)
        }
        for seed in self.seeds:
            yield RunSpec(
                run_id=run_id(normalized, seed),
                seed=seed,
                scenario=normalized,
                axes=axes,
                labels=labels,
                reference=reference,
            )

    def _build(self, values: dict[str, Any], where: str, *, reference: bool) -> dict[str, Any]:
        scenario = json.loads(json.dumps(self.base_scenario))  # deep copy, JSON types only
        for path, value in self.set.items():
            set_path(scenario, path, value, context=f"{self.path}: [set] {path!r}")
        for axis in self.axes:
            if axis.path is not None:
                set_path(
                    scenario,
                    axis.path,
                    _copy(values[axis.name]),
                    context=f"{self.path}: axis {axis.name!r} (path {axis.path!r})",
                )
        for path, text in self.derived.items():
            # Expressions see the defaults too when the scenario is already valid.
            try:
                visible = json.loads(_core.normalize(scenario_json(scenario)))
            except ValueError:
                visible = scenario
            try:
                value = evaluate(text, values, visible)
            except ExpressionError as e:
                raise SweepError(f"{self.path}: [derived] {path!r} with {where}: {e}") from None
            if isinstance(value, float) and not math.isfinite(value):
                raise SweepError(f"{self.path}: [derived] {path!r} with {where} gives {value}")
            set_path(scenario, path, value, context=f"{self.path}: [derived] {path!r}")
        if reference and self.reference is not None:
            for path, value in self.reference.set.items():
                set_path(scenario, path, value, context=f"{self.path}: [reference.set] {path!r}")
        if "load" in scenario:
            # A [load] table (an axis may set load.offered_load_mbps) becomes rate knobs here,
            # its calibration file found beside the base scenario.
            try:
                scenario = resolve_load(scenario, self.base.parent)
            except (OSError, ValueError) as e:
                raise SweepError(f"{self.path}: {where}: {e}") from None
        return scenario


def load_sweep(path: str | Path) -> Sweep:
    """Read and check a sweep file (its scenarios are checked by :meth:`Sweep.runs`).

    Raises:
        FileNotFoundError: the sweep file or its base scenario does not exist.
        SweepError: the file is not valid TOML or breaks a rule; the message names the file
            and the key.
    """
    file = Path(path)
    try:
        raw = _read_toml(file)
    except FileNotFoundError:
        raise FileNotFoundError(f"sweep file not found: {file}") from None
    except ValueError as e:
        raise SweepError(str(e).replace("scenario file", "sweep file")) from None
    return sweep_from_dict(raw, file)


def sweep_from_dict(raw: dict[str, Any], path: str | Path) -> Sweep:
    """Check a sweep definition given as a dict (the contents of a sweep file).

    ``path`` is where the definition notionally lives: a relative ``base`` and the
    calibration files of a ``[load]`` table are found beside it, and messages name it.
    ``base`` may also be the base scenario itself (a table) rather than a file.

    Raises:
        FileNotFoundError: the base scenario file does not exist.
        SweepError: the definition breaks a rule; the message names ``path`` and the key.
    """
    file = Path(path)

    def fail(message: str) -> SweepError:
        return SweepError(f"{file}: {message}")

    unknown = sorted(set(raw) - _TOP_KEYS)
    if unknown:
        raise fail(f"unknown key {unknown[0]!r} (expected {', '.join(sorted(_TOP_KEYS))})")
    if isinstance(raw.get("base"), dict):
        base = file
        base_scenario = _copy(raw["base"])
    elif isinstance(raw.get("base"), str):
        base = (file.parent / raw["base"]).resolve()
        if not base.is_file():
            raise FileNotFoundError(f"{file}: base scenario not found: {base}")
        base_scenario = _read_toml(base)
    else:
        raise fail(
            "'base' (the path of the base scenario, relative to this file, or the scenario "
            "itself as a table) is required"
        )

    seeds = _seeds(raw.get("seeds", [1]), fail)
    axes = tuple(_axis(i, a, fail) for i, a in enumerate(_list(raw.get("axes", []), "axes", fail)))
    names = [a.name for a in axes]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise fail(f"two axes are named {duplicate!r}")
    fixed = _table(raw.get("set", {}), "[set]", fail)
    derived = _table(raw.get("derived", {}), "[derived]", fail)
    for key, text in derived.items():
        if not isinstance(text, str):
            raise fail(f"[derived] {key!r} must be an expression string, not {text!r}")
    reference = _reference(raw.get("reference"), names, fail)
    return Sweep(
        name=str(raw.get("name", file.stem)),
        path=file,
        base=base,
        base_scenario=base_scenario,
        seeds=seeds,
        axes=axes,
        set=fixed,
        derived=derived,
        reference=reference,
        definition=raw,
    )


def _seeds(value: Any, fail: Callable[[str], SweepError]) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise fail(f"seeds ({value}) must be a positive count or a list of seeds")
        if value > MAX_RUNS:
            raise fail(f"seeds ({value}) must be at most {MAX_RUNS}, the most runs in a sweep")
        return tuple(range(1, value + 1))
    seeds = _list(value, "seeds", fail)
    if not seeds or not all(
        isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**64 for s in seeds
    ):
        raise fail(f"seeds ({value!r}) must be a count or a non-empty list of integers >= 0")
    if len(set(seeds)) != len(seeds):
        raise fail(f"seeds ({value!r}) has duplicates")
    return tuple(seeds)


def _axis(i: int, raw: Any, fail: Callable[[str], SweepError]) -> Axis:
    what = f"axes[{i}]"
    if not isinstance(raw, dict):
        raise fail(f"{what} must be a table ([[axes]])")
    unknown = sorted(set(raw) - _AXIS_KEYS)
    if unknown:
        raise fail(f"{what}: unknown key {unknown[0]!r} (expected {', '.join(sorted(_AXIS_KEYS))})")
    name = raw.get("name")
    if not isinstance(name, str) or not name.isidentifier():
        raise fail(f"{what}: 'name' ({name!r}) must be an identifier such as load or aqm")
    if name in _RESERVED:
        raise fail(f"{what}: the name {name!r} is reserved")
    what = f"axis {name!r}"
    values = _list(raw.get("values"), f"{what}: 'values'", fail)
    if not values:
        raise fail(f"{what}: 'values' must be a non-empty list")
    labels = raw.get("labels")
    if labels is None:
        labels = [_label(v) for v in values]
    elif not (isinstance(labels, list) and all(isinstance(x, str) for x in labels)):
        raise fail(f"{what}: 'labels' must be a list of strings")
    elif len(labels) != len(values):
        raise fail(f"{what}: {len(labels)} labels for {len(values)} values")
    path = raw.get("path")
    if path is not None and (not isinstance(path, str) or not path.strip()):
        raise fail(f"{what}: 'path' must be a dotted scenario path such as tcp.ecn")
    return Axis(name=name, values=tuple(values), labels=tuple(labels), path=path)


def _reference(raw: Any, names: list[str], fail: Callable[[str], SweepError]) -> Reference | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise fail("[reference] must be a table")
    unknown = sorted(set(raw) - _REFERENCE_KEYS)
    if unknown:
        raise fail(f"[reference]: unknown key {unknown[0]!r}")
    vary = _list(raw.get("vary", []), "[reference] vary", fail)
    for name in vary:
        if name not in names:
            raise fail(f"[reference] vary: {name!r} is not an axis ({', '.join(names)})")
    fixed = _table(raw.get("set", {}), "[reference] set", fail)
    if not fixed:
        raise fail("[reference] needs a 'set' table, e.g. the uncongested bottleneck rate")
    return Reference(label=str(raw.get("label", "uncongested")), vary=tuple(vary), set=fixed)


def _list(value: Any, what: str, fail: Callable[[str], SweepError]) -> list[Any]:
    if not isinstance(value, list):
        raise fail(f"{what} must be a list, not {value!r}")
    return value


def _table(value: Any, what: str, fail: Callable[[str], SweepError]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise fail(f"{what} must be a table of path = value")
    return value


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value, sort_keys=True)


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


# --- running --------------------------------------------------------------------------


@dataclass
class SweepReport:
    """What :func:`run_sweep` did (or :func:`run_sweeps` did for one of its sweeps)."""

    out: Path
    total: int
    skipped: int = 0
    damaged: int = 0
    """Stored runs found damaged (moved to ``damaged/``) and computed again."""
    superseded: int = 0
    """Runs of an earlier definition moved to ``superseded/`` (``new_definition``)."""
    done: int = 0
    failed: int = 0
    retried: int = 0
    wall_s: float = 0.0
    errors: dict[str, str] = field(default_factory=dict)


def simulate(
    scenario: dict[str, Any], seed: int, memory_budget: float | None = None
) -> tuple[str, Any]:
    """Worker entry point: run one scenario. Never raises for a failing run.

    Returns:
        ``("ok", Result)`` or ``("error", {"type", "message", "traceback"})``.
    """
    try:
        return "ok", run(scenario, seed, progress=False, memory_budget=memory_budget)
    except Exception as e:  # noqa: BLE001 - a failed run is data, reported by the caller
        return "error", {
            "type": type(e).__name__,
            "message": str(e),
            "traceback": traceback.format_exc(),
        }


def simulate_and_store(
    scenario: dict[str, Any], seed: int, memory_budget: float | None, sweep_dir: str
) -> tuple[str, Any]:
    """Worker entry point on the machine of the sweep folder: run one scenario and store it in
    ``sweep_dir`` (:meth:`ecnlab.store.SweepDir.write_run`, atomic), so its tables are written
    where they were made instead of crossing to the parent (a web run's are hundreds of MB).
    Never raises for a failing run.

    Returns:
        ``("stored", run_id)`` or ``("error", {"type", "message"[, "traceback"]})``.
    """
    status, payload = simulate(scenario, seed, memory_budget)
    if status != "ok":
        return status, payload
    return _write(store.SweepDir(sweep_dir), payload)


def _write(sweep_dir: store.SweepDir, result: Result) -> tuple[str, Any]:
    """Store a result: ``("stored", run_id)`` or ``("error", {"type", "message"})``."""
    try:
        sweep_dir.write_run(result)
    except (OSError, store.RunExistsError) as e:
        # A worker of a pool restarted after another worker died may have stored this same
        # run (same scenario and seed) meanwhile: an intact one is as good as ours.
        out = sweep_dir.runs / result.run_id
        if out.is_dir() and not store.run_problems(out, run_id=result.run_id):
            return "stored", result.run_id
        error = {"type": type(e).__name__, "message": str(e)}
        if isinstance(e, OSError) and e.errno is not None:
            error["errno"] = e.errno
        return "error", error
    return "stored", result.run_id


class _Backend:
    """A ``concurrent.futures`` executor plus what the sweep loop needs to know about it."""

    name = "?"
    max_in_flight: int | None = None
    memory_budget: float | None = None
    """Passed to every run (None: each run's default)."""

    def submit(self, spec: RunSpec, sweep_dir: Path) -> cf.Future[tuple[str, Any]]:
        """Start one run. Workers that share this process's file system store it in
        ``sweep_dir`` themselves (:func:`simulate_and_store`); others return the result and
        this process stores it."""
        raise NotImplementedError

    def worker_died(self, exc: BaseException) -> bool:
        """True if ``exc`` means the worker process died (the run may be retried)."""
        raise NotImplementedError

    def restart(self) -> None:
        """Make the executor usable again after a worker died."""

    def close(self, *, cancel: bool = False) -> None:
        raise NotImplementedError


class _LocalBackend(_Backend):
    """A pool of worker processes (spawned: no fork of a threaded parent)."""

    name = "local"

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.max_in_flight = jobs
        self._pool = self._new_pool()

    def _new_pool(self) -> cf.ProcessPoolExecutor:
        return cf.ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context("spawn"))

    def submit(self, spec: RunSpec, sweep_dir: Path) -> cf.Future[tuple[str, Any]]:
        return self._pool.submit(
            simulate_and_store, spec.scenario, spec.seed, self.memory_budget, str(sweep_dir)
        )

    def worker_died(self, exc: BaseException) -> bool:
        return isinstance(exc, cf.process.BrokenProcessPool)

    def restart(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = self._new_pool()

    def close(self, *, cancel: bool = False) -> None:
        if cancel:
            # Do not wait for the runs under way: kill their processes.
            processes = list(getattr(self._pool, "_processes", {}).values())
            self._pool.shutdown(wait=False, cancel_futures=True)
            for p in processes:
                p.kill()
        else:
            self._pool.shutdown(wait=True)


class _DaskBackend(_Backend):
    """A ``distributed`` client: a LocalCluster, or the scheduler at ``address``."""

    name = "dask"

    def __init__(self, jobs: int, address: str | None) -> None:
        try:
            import distributed
        except ImportError:
            raise SweepError(
                "the dask backend needs the distributed package: pip install 'ecnlab[dask]'"
            ) from None
        import logging

        self._distributed = distributed
        self._cluster = None
        if address:
            self._client = distributed.Client(address)
        else:
            self._cluster = distributed.LocalCluster(
                n_workers=jobs,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            self._client = distributed.Client(self._cluster)
        self._executor = self._client.get_executor(pure=False)

    def submit(self, spec: RunSpec, sweep_dir: Path) -> cf.Future[tuple[str, Any]]:
        future: cf.Future[tuple[str, Any]] = self._executor.submit(
            simulate, spec.scenario, spec.seed, self.memory_budget
        )
        return future

    def worker_died(self, exc: BaseException) -> bool:
        # The scheduler already retried the task on other workers (distributed's
        # allowed-failures); KilledWorker means it gave up, so do not retry again.
        return False

    def close(self, *, cancel: bool = False) -> None:
        self._executor.shutdown(wait=not cancel)
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def run_sweep(
    sweep: Sweep | str | Path,
    out: str | Path,
    *,
    jobs: int | None = None,
    backend: str = "local",
    scheduler: str | None = None,
    retries: int = 2,
    progress: bool | None = None,
    new_definition: bool = False,
    memory_budget: float | str | None = None,
) -> SweepReport:
    """Run every run of a sweep not yet stored (intact) in ``out``.

    Args:
        sweep: a :class:`Sweep` or the path of a sweep file.
        out: the sweep folder (created): ``runs/<run_id>/``, ``sweep.json``, ``errors/``.
        jobs: runs at once (local) or LocalCluster workers (dask); default: CPU count.
        backend: ``"local"`` (process pool) or ``"dask"``.
        scheduler: the Dask scheduler address (``tcp://host:8786``); default: a LocalCluster.
        retries: local backend: how many times a run whose worker died is retried.
        progress: draw a progress bar on stderr; ``None``: only on a terminal.
        new_definition: replace the sweep ``out`` holds even if its runs differ from this
            one's at the same axis values and seeds; its other runs go to ``superseded/``.
        memory_budget: as :func:`ecnlab.run`; every run's estimate is checked against it
            before anything runs (and each run again when it starts).

    Stored runs are verified first (:func:`ecnlab.store.run_problems`); a damaged one is
    moved to ``out/damaged/`` and computed again.

    Returns:
        A :class:`SweepReport`; failed runs are counted there and recorded in
        ``out/errors/<run_id>.json``, they do not raise.

    Raises:
        SweepError: the sweep is invalid (nothing has run), a run would need more memory
            than the budget, or ``out`` holds another sweep (or this one with another
            definition).
        store.SweepLockedError: another sweep is running into ``out``.
    """
    if not isinstance(sweep, Sweep):
        sweep = load_sweep(sweep)
    (report,) = run_sweeps(
        [(sweep, out)],
        jobs=jobs,
        backend=backend,
        scheduler=scheduler,
        retries=retries,
        progress=progress,
        new_definition=new_definition,
        memory_budget=memory_budget,
    )
    return report


def run_sweeps(
    sweeps: Sequence[tuple[Sweep, str | Path]],
    *,
    jobs: int | None = None,
    backend: str = "local",
    scheduler: str | None = None,
    retries: int = 2,
    progress: bool | None = None,
    new_definition: bool = False,
    keep: Sequence[Collection[str]] | None = None,
    memory_budget: float | str | None = None,
) -> list[SweepReport]:
    """Run several sweeps, each into its own folder, through one pool of workers.

    Each (sweep, folder) pair is treated as :func:`run_sweep` treats its arguments (the same
    options, checks, locks and folder layout), but the runs of all of them share the
    workers: a worker that has no run of one sweep left takes the next sweep's instead of
    waiting for the slowest run of its own (a reproduction runs each look's parts this way).
    Every sweep is checked, and every folder locked, before anything runs. Stored runs are
    verified by ``jobs`` threads at once (hashing releases the interpreter's lock), except
    those this process stored or verified before, whose files are unchanged since
    (docs/sweeps.md). ``keep`` (one collection per sweep, with ``new_definition``) names
    stored runs of the new definition that the sweep does not list, such as a reproduction's
    later seeds: they stay in the folder instead of moving to ``superseded/``.

    Returns:
        One :class:`SweepReport` per sweep, in order; each one's ``wall_s`` is the whole
        call's.

    Raises:
        SweepError: as :func:`run_sweep`, or two sweeps name the same folder.
        DiskFullError: a run could not be stored for want of disk space: the runs in flight
            ended and no other started; the message says how many failed and how many were
            not started (what is stored is kept; the same call again resumes).
        store.SweepLockedError: another sweep is running into one of the folders.
    """
    if backend not in BACKENDS:
        raise SweepError(f"backend {backend!r} is not one of {', '.join(BACKENDS)}")
    if jobs is not None and jobs < 1:
        raise SweepError(f"jobs ({jobs}) must be at least 1")
    if retries < 0:
        raise SweepError(f"retries ({retries}) must be >= 0")
    folders = [Path(out).resolve() for _, out in sweeps]
    twice = next((f for f in folders if folders.count(f) > 1), None)
    if twice is not None:
        raise SweepError(f"two sweeps would run into the same folder {twice}")
    if keep is None:
        keep = [()] * len(sweeps)
    elif len(keep) != len(sweeps):
        raise SweepError(f"keep has {len(keep)} entries for {len(sweeps)} sweeps")
    budget = memory_budget_bytes(memory_budget)
    all_specs = []
    for sweep, _ in sweeps:
        specs = sweep.runs()  # validates every scenario before anything runs
        _check_budget(sweep, specs, budget)
        all_specs.append(specs)
    jobs = jobs or multiprocessing.cpu_count()
    if progress is None:
        progress = sys.stderr.isatty()

    start = time.perf_counter()
    reports = []
    todo: list[_Todo] = []
    with contextlib.ExitStack() as locks:
        for (sweep, out), specs, kept in zip(sweeps, all_specs, keep):
            sweep_dir = store.SweepDir(out)
            locks.enter_context(sweep_dir.lock())
            report, pending = _prepare(sweep, specs, sweep_dir, jobs, new_definition, kept)
            reports.append(report)
            todo += [_Todo(spec, sweep_dir, report) for spec in pending]
        if todo:
            chosen: _Backend = (
                _LocalBackend(jobs) if backend == "local" else _DaskBackend(jobs, scheduler)
            )
            if budget is not None:
                chosen.memory_budget = budget
            name = sweeps[0][0].name if len(sweeps) == 1 else f"{len(sweeps)} sweeps"
            with _Display(name, len(todo), enabled=progress) as display:
                _execute(todo, chosen, retries, display)
    for report in reports:
        report.wall_s = time.perf_counter() - start
    return reports


@dataclass
class _Todo:
    """A run to compute, the folder it goes to and the report that counts it."""

    spec: RunSpec
    sweep_dir: store.SweepDir
    report: SweepReport


def _prepare(
    sweep: Sweep,
    specs: list[RunSpec],
    sweep_dir: store.SweepDir,
    jobs: int,
    new_definition: bool,
    keep: Collection[str],
) -> tuple[SweepReport, list[RunSpec]]:
    """Record the sweep in its (locked) folder, verify its stored runs (setting damaged ones
    aside) and say which runs are left to compute."""
    try:
        dropped = sweep_dir.record_sweep(
            sweep.describe(),
            [s.record() for s in specs],
            new_definition=new_definition,
            keep=keep,
        )
    except store.StoreError as e:
        raise SweepError(str(e)) from None
    unique: dict[str, RunSpec] = {}
    for spec in specs:
        unique.setdefault(spec.run_id, spec)
    stored = [r for r in unique if sweep_dir.is_stored(r)]
    with cf.ThreadPoolExecutor(jobs) as pool:
        problems = pool.map(lambda r: _run_problems(sweep_dir.runs / r, r), stored)
        damaged = [r for r, p in zip(stored, problems) if p]
    for r in damaged:
        sweep_dir.set_aside(r)
    intact = set(stored) - set(damaged)
    todo = [spec for r, spec in unique.items() if r not in intact]
    report = SweepReport(
        out=sweep_dir.root,
        total=len(unique),
        skipped=len(intact),
        damaged=len(damaged),
        superseded=len(dropped),
    )
    return report, todo


# Runs this process stored or found intact, with the size, modification time and inode of each
# of their files. A later look of the same reproduction finds them unchanged by these and does
# not hash them again: re-hashing the first look's runs of `dcn`'s full mode (231 runs, 23 GB)
# took 118 s of two threads. A new process (a resumed sweep, `ecnlab verify`) hashes every run.
_INTACT: dict[Path, tuple[tuple[str, int, int, int], ...]] = {}


def _files_state(run_dir: Path) -> tuple[tuple[str, int, int, int], ...]:
    """Name, size, modification time (ns) and inode of every file of a run folder."""
    found = []
    for f in sorted(run_dir.iterdir()):
        st = f.stat()
        found.append((f.name, st.st_size, st.st_mtime_ns, st.st_ino))
    return tuple(found)


def _run_problems(run_dir: Path, rid: str) -> list[str]:
    """:func:`ecnlab.store.run_problems`, except for a run this process stored or verified
    and whose files are unchanged since (:data:`_INTACT`)."""
    try:
        state = _files_state(run_dir)
    except OSError:
        state = None
    if state is not None and _INTACT.get(run_dir.absolute()) == state:
        return []
    problems = store.run_problems(run_dir, run_id=rid)
    if not problems and state is not None:
        _INTACT[run_dir.absolute()] = state
    return problems


def _check_budget(sweep: Sweep, specs: list[RunSpec], budget: float | None) -> None:
    """Refuse the sweep if any run's estimate exceeds the budget, before anything runs."""
    if budget is None:
        return
    seen: set[int] = set()
    for spec in specs:
        if id(spec.scenario) in seen:  # the seeds of one point share their scenario
            continue
        seen.add(id(spec.scenario))
        try:
            _core.check_budget(json.dumps(spec.scenario), budget)
        except ValueError as e:
            where = ", ".join(f"{k}={v}" for k, v in spec.labels.items() if v is not None)
            raise SweepError(f"{sweep.path}: run with {where or 'no axes'}: {e}") from None


def _execute(todo: list[_Todo], backend: _Backend, retries: int, display: _Display) -> None:
    queue = list(reversed(range(len(todo))))  # pop() from the end keeps the sweeps' order
    attempts = [0] * len(todo)
    pending: dict[cf.Future[tuple[str, Any]], int] = {}
    limit = backend.max_in_flight or len(todo)
    done = failed = 0
    # The first run that could not be stored for want of space: then no run starts.
    disk_full: _Todo | None = None
    ok = False
    try:
        while pending or (queue and disk_full is None):
            broken = False
            while queue and len(pending) < limit and disk_full is None:
                i = queue.pop()
                try:
                    pending[backend.submit(todo[i].spec, todo[i].sweep_dir.root)] = i
                except Exception as exc:
                    if not backend.worker_died(exc):
                        raise
                    # The pool broke since the last wait: retry this one, and the runs in
                    # flight below, on a new pool.
                    queue.append(i)
                    broken = True
                    break
            finished = set() if broken else cf.wait(pending, return_when=cf.FIRST_COMPLETED)[0]
            for future in finished:
                i = pending.pop(future)
                exc = future.exception()
                if exc is not None and backend.worker_died(exc):
                    broken = True
                    attempts[i] += 1
                    if attempts[i] <= retries:
                        todo[i].report.retried += 1
                        queue.append(i)
                        continue
                    outcome: tuple[str, Any] = ("error", _error_of(exc, attempts[i]))
                elif exc is not None:
                    outcome = ("error", _error_of(exc, attempts[i] + 1))
                else:
                    outcome = future.result()
                error = _store(todo[i], outcome)
                if error is None:
                    done += 1
                else:
                    failed += 1
                    if disk_full is None and error.get("errno") in _DISK_FULL:
                        # Every later run would be simulated only to fail the same way.
                        disk_full = todo[i]
                display.update(done, failed, len(queue) + len(pending))
            if broken:
                # A dead worker breaks the whole local pool: the runs still in flight are
                # lost with it, and are retried like the one that died.
                for i in pending.values():
                    attempts[i] += 1
                    todo[i].report.retried += 1
                    queue.append(i)
                pending.clear()
                backend.restart()
        ok = True
    finally:
        backend.close(cancel=not ok)
    if disk_full is not None:
        raise DiskFullError(
            f"{disk_full.sweep_dir.root}: a run could not be stored "
            f"({disk_full.report.errors[disk_full.spec.run_id]}); {failed} runs failed and "
            f"{len(queue)} were not started ({done} stored by this call, kept); free space on "
            "that disk and run the same command again"
        )


def _error_of(exc: BaseException, attempts: int) -> dict[str, Any]:
    message = str(exc) or type(exc).__name__
    if isinstance(exc, cf.process.BrokenProcessPool):
        message = f"the worker process died {attempts} times running this run ({message})"
    return {
        "type": type(exc).__name__,
        "message": message,
        "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    }


def _store(run: _Todo, outcome: tuple[str, Any]) -> dict[str, Any] | None:
    """Count a finished run in its report (and store it, if the worker did not): None if it
    is stored, else its error (recorded)."""
    status, payload = outcome
    if status == "ok":  # returned by the worker: store it here
        status, payload = _write(run.sweep_dir, payload)
    if status == "stored":
        run.report.done += 1
        out = run.sweep_dir.runs / run.spec.run_id
        # Its tables were hashed as they were written, by the worker or by _write.
        with contextlib.suppress(OSError):
            _INTACT[out.absolute()] = _files_state(out)
        return None
    run.report.failed += 1
    run.report.errors[run.spec.run_id] = payload["message"]
    # On a full disk the record may not fit either; the report still counts the failure.
    with contextlib.suppress(OSError):
        run.sweep_dir.write_error(run.spec.record(), payload)
    return payload


class _Display:
    """The sweep's progress bar: runs done, failed, remaining, ETA (quiet off a terminal)."""

    def __init__(self, name: str, total: int, *, enabled: bool) -> None:
        self._progress: Progress | None = None
        if enabled:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TextColumn("{task.fields[done]} done"),
                TextColumn("[red]{task.fields[failed]} failed[/]"),
                TextColumn("{task.fields[remaining]} remaining"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._task = self._progress.add_task(
                escape(name), total=total, done=0, failed=0, remaining=total
            )

    def __enter__(self) -> _Display:  # noqa: PYI034
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def update(self, done: int, failed: int, remaining: int) -> None:
        if self._progress is not None:
            self._progress.update(
                self._task, completed=done + failed, done=done, failed=failed, remaining=remaining
            )
