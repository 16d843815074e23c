"""Running a scenario: drive the native simulation in chunks, with progress and Ctrl-C."""

from __future__ import annotations

import json
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
from ._result import Result, tables_from_native
from ._scenario import ScenarioSource, load_scenario

__all__ = ["run"]

_NS = 1_000_000_000
# Adaptive chunking: aim for this much wall time per run_until call, so progress updates
# and Ctrl-C are prompt whatever the scenario's speed, while call overhead stays negligible.
_TARGET_CHUNK_WALL_S = 0.1
_MIN_CHUNK_NS = 1_000_000  # 1 ms of simulated time
_FIRST_CHUNK_NS = 10_000_000  # 10 ms


def run(
    scenario: ScenarioSource,
    seed: int = 1,
    *,
    progress: bool | None = None,
    chunk_s: float | None = None,
) -> Result:
    """Run one scenario with one seed.

    Args:
        scenario: a scenario dict, or the path of a TOML file (see :func:`load_scenario`).
        seed: the run seed, an integer in ``[0, 2**64)``. Same scenario and seed give
            identical tables.
        progress: draw a progress bar of simulated time on stderr. ``None`` (default):
            only when stderr is a terminal.
        chunk_s: simulated seconds per call into the core. ``None`` (default) adapts the
            chunk so each call takes about 0.1 s of wall time.

    Returns:
        The :class:`Result`; ``summary["wall_s"]`` is the wall time of the simulation
        (building the network, running, and finalizing the tables).

    Raises:
        ValueError: the scenario is invalid (the message names the field), or the seed is
            out of range.
        TypeError: the seed is not an integer.
        KeyboardInterrupt: re-raised after the progress display is closed and the
            simulation dropped, when interrupted between chunks.
    """
    if not isinstance(scenario, dict) or "load" in scenario:
        # A [load] table in a dict is resolved against the working directory.
        scenario = load_scenario(scenario)
    _check_seed(seed)
    if chunk_s is not None and not chunk_s > 0:
        raise ValueError(f"chunk_s ({chunk_s}) must be positive")
    try:
        config_json = json.dumps(scenario, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ValueError(f"scenario is not JSON-serializable: {e}") from None
    normalized: dict[str, Any] = json.loads(_core.normalize(config_json))

    if progress is None:
        progress = sys.stderr.isatty()

    wall_start = time.perf_counter()
    sim = _core.Simulation(config_json, seed)
    try:
        if progress:
            _advance_with_progress(sim, chunk_s, normalized.get("name", "scenario"))
        else:
            _advance(sim, chunk_s, None)
        native = sim.results()
        wall_s = time.perf_counter() - wall_start
        summary: dict[str, Any] = dict(sim.summary())
    finally:
        # On Ctrl-C or an error nothing of this run survives: no partial result escapes.
        del sim
    summary["wall_s"] = wall_s
    return Result(
        tables=tables_from_native(native),
        summary=summary,
        scenario=normalized,
        seed=seed,
    )


def _check_seed(seed: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed ({seed!r}) must be an integer")
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed ({seed}) must be in [0, 2**64)")


def _advance_with_progress(sim: _core.Simulation, chunk_s: float | None, name: str) -> None:
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

        _advance(sim, chunk_s, update)


def _advance(
    sim: _core.Simulation, chunk_s: float | None, on_chunk: Callable[[int], None] | None
) -> None:
    """Call ``run_until`` in chunks until the end; ``on_chunk(now_ns)`` after each."""
    end_ns = sim.end_ns
    adaptive = chunk_s is None
    step_ns = _FIRST_CHUNK_NS if chunk_s is None else max(1, round(chunk_s * _NS))
    while True:
        target = min(sim.now_ns + step_ns, end_ns)
        t0 = time.perf_counter()
        done = sim.run_until(target)
        dt = time.perf_counter() - t0
        if on_chunk is not None:
            on_chunk(sim.now_ns)
        if done:
            return
        if target >= end_ns:
            raise RuntimeError(
                f"Simulation.run_until({end_ns}) returned False at the end of the run "
                f"(now_ns={sim.now_ns}); this is a bug in the ecnlab core"
            )
        if adaptive and dt > 0:
            # Scale towards the target wall time, at most 4x per step either way.
            factor = min(4.0, max(0.25, _TARGET_CHUNK_WALL_S / dt))
            step_ns = max(_MIN_CHUNK_NS, int(step_ns * factor))
