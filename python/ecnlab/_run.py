"""Running a scenario: drive the native simulation in chunks, with progress and Ctrl-C."""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from . import _core
from ._result import Result
from ._scenario import ScenarioSource, load_scenario, scenario_json

__all__ = ["available_memory", "memory_budget_bytes", "parse_bytes", "run"]

_NS = 1_000_000_000
# Adaptive chunking: aim for this much wall time per run_until call, so progress updates
# and Ctrl-C are prompt whatever the scenario's speed, while call overhead stays negligible.
_TARGET_CHUNK_WALL_S = 0.1
_MIN_CHUNK_NS = 1_000_000  # 1 ms of simulated time
_FIRST_CHUNK_NS = 10_000_000  # 10 ms
# Events per call into the core, whatever its simulated span: about 0.1-0.3 s of work, so
# Ctrl-C is handled promptly even where one millisecond holds millions of events.
MAX_EVENTS_PER_CALL = 1_000_000
BUDGET_ENV = "ECNLAB_MEMORY_BUDGET"


def run(
    scenario: ScenarioSource,
    seed: int = 1,
    *,
    progress: bool | None = None,
    chunk_s: float | None = None,
    memory_budget: float | str | None = None,
) -> Result:
    """Run one scenario with one seed.

    Args:
        scenario: a scenario dict, or the path of a TOML file (see :func:`load_scenario`).
        seed: the run seed, an integer in ``[0, 2**64)``. Same scenario and seed give
            identical tables.
        progress: draw a progress bar of simulated time on stderr. ``None`` (default):
            only when stderr is a terminal.
        chunk_s: simulated seconds per call into the core, at least 0.001. ``None``
            (default) adapts the chunk so each call takes about 0.1 s of wall time. A call
            never runs more than a million events, so Ctrl-C stays prompt either way.
        memory_budget: the most memory (bytes, or a text such as ``"4GB"``) the run may be
            estimated to need (:func:`ecnlab._core.estimate`); a scenario over it is refused
            before it starts, naming the fields that drive the estimate. ``None`` (default):
            the ``ECNLAB_MEMORY_BUDGET`` environment variable, else the machine's available
            memory.

    Returns:
        The :class:`Result`; ``summary["wall_s"]`` is the wall time of the simulation
        (building the network, running, and finalizing the tables).

    Raises:
        ValueError: the scenario is invalid (the message names the field), it would need
            more memory than the budget, or the seed or ``chunk_s`` is out of range.
        TypeError: the seed is not an integer.
        MemoryError: the run's resident memory grew by more than the budget while it ran
            (checked after each call into the core). The estimate counts no state for the
            connections of traffic workloads, which can pile up by the hundred thousand under
            overload (docs/scenario.md, "Memory budget"); this stops such a run before the
            system runs out of memory, naming the sizes and the simulated time reached.
        KeyboardInterrupt: re-raised after the progress display is closed and the
            simulation dropped, when interrupted between chunks.
    """
    if not isinstance(scenario, dict) or "load" in scenario:
        # A [load] table in a dict is resolved against the working directory.
        scenario = load_scenario(scenario)
    _check_seed(seed)
    if chunk_s is not None and not (
        isinstance(chunk_s, (int, float)) and chunk_s >= _MIN_CHUNK_NS / _NS
    ):
        raise ValueError(
            f"chunk_s ({chunk_s}) must be at least {_MIN_CHUNK_NS / _NS:g} "
            "(1 ms of simulated time per call)"
        )
    budget = memory_budget_bytes(memory_budget)
    config_json = scenario_json(scenario)
    normalized: dict[str, Any] = json.loads(_core.normalize(config_json))

    if progress is None:
        progress = sys.stderr.isatty()

    wall_start = time.perf_counter()
    resident_start = _resident_bytes()
    sim = _core.Simulation(config_json, seed, budget)
    end_s = sim.end_ns / _NS

    def check_growth(now_ns: int) -> None:
        grown = (_resident_bytes() or 0) - resident_start
        if grown > budget:
            text = _core.bytes_text
            estimate = _core.estimate(config_json)["memory_bytes"]
            raise MemoryError(
                f"the run outgrew its memory budget of {text(budget)}: its resident "
                f"memory grew by {text(grown)} in its first {now_ns / _NS:g} of "
                f"{end_s:g} simulated s, against an estimate of "
                f"{text(estimate)} (the estimate counts no state for connections that "
                "pile up when the network cannot carry its load: docs/scenario.md, \"Memory "
                "budget\"); raise the budget, or shorten or lighten the run"
            )

    # Without a budget, or where the resident memory cannot be read, there is nothing to check.
    guard = None if budget is None or resident_start is None else check_growth
    try:
        if progress:
            _advance_with_progress(sim, chunk_s, normalized.get("name", "scenario"), guard)
        else:
            _advance(sim, chunk_s, guard)
        native = sim.results()
        wall_s = time.perf_counter() - wall_start
        summary: dict[str, Any] = dict(sim.summary())
    finally:
        # On Ctrl-C or an error nothing of this run survives: no partial result escapes.
        del sim
    summary["wall_s"] = wall_s
    # The pyarrow tables are made when first used: storing the run needs none (issue 21).
    return Result.from_native(native, summary=summary, scenario=normalized, seed=seed)


def available_memory() -> float | None:
    """The machine's available memory in bytes (Linux ``MemAvailable``), or None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return None


_UNITS = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9}
_UNITS.update({"t": 1e12, "tb": 1e12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40})


def parse_bytes(text: str | float) -> float:
    """A size in bytes from a number or a text such as ``512MB``, ``4GB`` or ``2GiB``."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        number, unit = float(text), ""
    else:
        raw = str(text).strip().lower().replace(" ", "")
        digits = raw.rstrip("abcdefghijklmnopqrstuvwxyz")
        number, unit = (float(digits) if digits else math.nan), raw[len(digits) :]
    if unit not in _UNITS or not (math.isfinite(number) and number > 0):
        raise ValueError(
            f"memory budget ({text!r}) must be a positive size such as 4GB, 512MB or 2GiB"
        )
    return number * _UNITS[unit]


def memory_budget_bytes(budget: float | str | None = None) -> float | None:
    """The budget in bytes: ``budget``, else ``$ECNLAB_MEMORY_BUDGET``, else the available
    memory (None when it cannot be known: no check)."""
    if budget is None:
        budget = os.environ.get(BUDGET_ENV) or None
        if budget is None:
            return available_memory()
        try:
            return parse_bytes(budget)
        except ValueError as e:
            raise ValueError(f"{BUDGET_ENV}: {e}") from None
    return parse_bytes(budget)


def _resident_bytes() -> float | None:
    """This process's resident memory in bytes (Linux ``/proc/self/statm``), or None."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return float(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return None


def _check_seed(seed: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed ({seed!r}) must be an integer")
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed ({seed}) must be in [0, 2**64)")


def _advance_with_progress(
    sim: _core.Simulation,
    chunk_s: float | None,
    name: str,
    on_chunk: Callable[[int], None] | None = None,
) -> None:
    console = Console(stderr=True)
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[sim]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    end_s = sim.end_ns / _NS
    # transient: the bar disappears when done (or interrupted), leaving a clean terminal.
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(escape(name), total=end_s, sim=f"0/{end_s:g} s sim")

        def update(now_ns: int) -> None:
            now_s = now_ns / _NS
            bar.update(task, completed=now_s, sim=f"{now_s:.1f}/{end_s:g} s sim")
            if on_chunk is not None:
                on_chunk(now_ns)

        _advance(sim, chunk_s, update)


def _advance(
    sim: _core.Simulation, chunk_s: float | None, on_chunk: Callable[[int], None] | None
) -> None:
    """Call ``run_until`` in chunks until the end; ``on_chunk(now_ns)`` after each."""
    end_ns = sim.end_ns
    adaptive = chunk_s is None
    step_ns = _FIRST_CHUNK_NS if chunk_s is None else max(1, round(chunk_s * _NS))
    target = 0
    while True:
        if sim.now_ns >= target:
            target = min(sim.now_ns + step_ns, end_ns)
        before = sim.events
        t0 = time.perf_counter()
        done = sim.run_until(target, MAX_EVENTS_PER_CALL)
        dt = time.perf_counter() - t0
        if on_chunk is not None:
            on_chunk(sim.now_ns)
        if done:
            return
        if sim.events - before >= MAX_EVENTS_PER_CALL:
            continue  # stopped by the event cap: on towards the same target
        if target >= end_ns:
            raise RuntimeError(
                f"Simulation.run_until({end_ns}) returned False at the end of the run "
                f"(now_ns={sim.now_ns}); this is a bug in the ecnlab core"
            )
        if adaptive and dt > 0:
            # Scale towards the target wall time, at most 4x per step either way.
            factor = min(4.0, max(0.25, _TARGET_CHUNK_WALL_S / dt))
            step_ns = max(_MIN_CHUNK_NS, int(step_ns * factor))
