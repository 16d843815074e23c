"""Offered-load calibration, as the seed studies define load.

Seed 000 (section 4.2) and seed 004 (section 4.2) define the offered load of a workload as the
throughput it achieves in the loaded direction when the bottleneck is replaced by an
uncongested 1 Gb/s link. :func:`calibrate` does exactly that: it runs the scenario with
``topology.bottleneck.rate_bps = 1e9``, measures the bits per second the bottleneck's down
(or up) direction carries in the measurement window (wire bytes: payload plus headers, as a
link counter sees them), and scales the workloads' rate knobs to reach each target.

Rate knobs, scaled together by one factor: ``web_sessions.session_rate_per_s``,
``exchanges.arrival_rate_per_s``, ``packmime_http.rate_per_s``, ``packet_source.rate_pps``, and the population
``tpcw_browsers.browsers`` (rounded to whole browsers). Bulk flows are not scaled (their load is
set by the network, not by a rate). On an uncongested link the load is proportional to
the arrival rate (every arrival brings the same expected bytes), so the factor for a target
is ``target / slope`` with ``slope`` fitted through the origin on every measured point; each
target is then measured once more (``refine``) and the fit redone with that point.

A scenario uses a stored calibration with a ``[load]`` table, resolved here before the scenario
reaches the Rust core (which does not know the table)::

    [load]
    offered_load_mbps = 98
    calibration = "web-sessions.calibration.json"   # relative to the scenario file

:func:`resolve_load` sets the knobs to ``base * offered_load_mbps / slope`` and removes the
table. The calibration records the knobs' base values; a scenario whose knobs differ from them
is refused, since the calibration would not describe it.

**Per-direction targets** (seed 004 section 5.2: 105.3 Mb/s forward, 91.2 Mb/s reverse):
:func:`calibrate_directions` gives each direction its own group of workloads, whose knobs are
scaled by that direction's factor. Every run measures both directions, and the loads are
fitted as a linear map of the factors through the origin, ``load[d] = sum_g A[d][g] f[g]``
(a workload loads mostly its own direction, but its requests and ACKs load the other one too);
the factors for the targets solve ``A f = target``. The first runs are at ``f = (1, 1)`` and
with each group's factor halved, so ``A`` is determined; each target is then measured once
more and the fit redone. Such a calibration is used with one load per direction::

    [load]
    offered_load_mbps = { down = 105.3, up = 91.2 }
    calibration = "tcp-mix.calibration.json"
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._load import (
    DIRECTIONS,
    KNOBS,
    UNCONGESTED_BPS,
    Calibration,
    CalibrationPoint,
    DirectionalCalibration,
    DirectionalPoint,
    _check_direction_loads,
    _knobs,
    _set_knobs,
    load_calibration,
    resolve_load,
)
from ._run import run
from ._scenario import load_scenario

__all__ = [
    "KNOBS",
    "Calibration",
    "CalibrationPoint",
    "DirectionalCalibration",
    "DirectionalPoint",
    "calibrate",
    "calibrate_directions",
    "load_calibration",
    "measure_load_mbps",
    "mser5",
    "resolve_load",
    "warmup",
]

def measure_load_mbps(result: Any, direction: str = "down") -> float:
    """Bits per second the bottleneck carried in ``direction`` over the measurement window."""
    links = result.links.to_pylist()
    rows = [r for r in links if r["link"] == f"bottleneck_{direction}"]
    if not rows:
        raise ValueError("the run has no link intervals in its measurement window")
    span = rows[-1]["t_end_s"] - rows[0]["t_start_s"]
    return sum(r["delivered_bytes"] for r in rows) * 8 / span / 1e6


def calibrate(
    scenario: Any,
    targets_mbps: Sequence[float],
    *,
    seed: int = 1,
    direction: str = "down",
    refine: bool = True,
    progress: bool | None = False,
) -> Calibration:
    """Find the rate knobs that offer each target load (Mb/s) on an uncongested 1 Gb/s link.

    Args:
        scenario: a scenario dict or TOML path. Its ``duration_s`` and ``warmup_s`` are those of
            the calibration runs: heavy-tailed sizes need long runs (spec workloads 1.4).
        targets_mbps: the loads wanted, in Mb/s.
        seed: seed of the first run; refinement runs use ``seed + 1``, ``seed + 2``...
        direction: ``down`` (servers to clients, the seeds' loaded direction) or ``up``.
        refine: measure each target once more and refit with those points.
        progress: as in :func:`ecnlab.run`.

    Raises:
        ValueError: no workload has a rate knob, a target is not positive, or the run carries
            no traffic in ``direction``.
    """
    base = load_scenario(scenario) if not isinstance(scenario, dict) else copy.deepcopy(scenario)
    base.pop("load", None)
    if direction not in ("down", "up"):
        raise ValueError(f"direction ({direction!r}) must be 'down' or 'up'")
    if not targets_mbps or any(not (t > 0 and math.isfinite(t)) for t in targets_mbps):
        raise ValueError(f"targets_mbps ({list(targets_mbps)}) must be positive numbers")
    knobs = _knobs(base)
    if not knobs:
        raise ValueError(
            "no workload with a rate knob (" + ", ".join(f"{k}.{v}" for k, v in KNOBS.items()) + ")"
        )
    base.setdefault("topology", {}).setdefault("bottleneck", {})["rate_bps"] = UNCONGESTED_BPS
    cal = Calibration(
        knobs=knobs,
        direction=direction,
        duration_s=float(base.get("duration_s", 60.0)),
        warmup_s=float(base.get("warmup_s", 0.0)),
        scenario_name=str(base.get("name", "")),
    )

    def measure(factor: float, s: int) -> float:
        sc = copy.deepcopy(base)
        _set_knobs(sc, {k: v * factor for k, v in knobs.items()})
        # The factor actually run (a population is rounded to whole browsers).
        k0, v0 = next(iter(knobs.items()))
        _, i, name = k0.split(".")
        factor = sc["workloads"][int(i)][name] / v0
        mbps = measure_load_mbps(run(sc, s, progress=progress), direction)
        cal.points.append(CalibrationPoint(factor=factor, mbps=mbps, seed=s))
        return mbps

    if measure(1.0, seed) <= 0:
        raise ValueError(f"the workload carries nothing in the {direction} direction")
    cal.fit()
    if refine:
        for i, t in enumerate(sorted(set(targets_mbps))):
            measure(cal.factor_for(t), seed + 1 + i)
        cal.fit()
    cal.targets = {float(t): cal.factor_for(t) for t in targets_mbps}
    return cal


def calibrate_directions(
    scenario: Any,
    targets_mbps: Sequence[dict[str, float]],
    workloads: dict[str, Sequence[int]],
    *,
    seed: int = 1,
    refine: bool = True,
    progress: bool | None = False,
) -> DirectionalCalibration:
    """Calibrate a load per direction, each scaled by the knobs of its own workloads.

    Args:
        scenario: a scenario dict or TOML path (its ``duration_s`` and ``warmup_s`` are the
            calibration runs').
        targets_mbps: the loads wanted, each ``{"down": Mb/s, "up": Mb/s}``.
        workloads: ``{direction: [workload indices]}``: whose rate knobs each direction's
            factor scales. Every workload with a rate knob is in exactly one group, and there
            is one group per direction of the targets.
        seed: seed of the first run; later runs use ``seed + 1``, ``seed + 2``...
        refine: measure each target once more and refit with those points.
        progress: as in :func:`ecnlab.run`.

    Raises:
        ValueError: the groups or targets are malformed, or the targets need a non-positive
            factor.
    """
    base = load_scenario(scenario) if not isinstance(scenario, dict) else copy.deepcopy(scenario)
    base.pop("load", None)
    if not targets_mbps:
        raise ValueError("targets_mbps is empty: give at least one {down: ..., up: ...}")
    for t in targets_mbps:
        _check_direction_loads(t, "target")
        if set(t) != set(workloads):
            raise ValueError(
                f"target ({t}) must give a load for each direction of workloads ({list(workloads)})"
            )
    if set(workloads) - set(DIRECTIONS) or not workloads:
        raise ValueError(f"workloads ({workloads}) must map down and/or up to workload indices")
    knobs = _knobs(base)
    groups: dict[str, list[str]] = {}
    seen: dict[int, str] = {}
    for d, indices in workloads.items():
        groups[d] = []
        for i in indices:
            if i in seen:
                raise ValueError(f"workload {i} is in both the {seen[i]} and the {d} group")
            seen[i] = d
            paths = [k for k in knobs if k.split(".")[1] == str(i)]
            if not paths:
                raise ValueError(f"workloads.{i} has no rate knob (or does not exist)")
            groups[d] += paths
        if not groups[d]:
            raise ValueError(f"the {d} group has no workload")
    ungrouped = sorted(set(knobs) - {k for ks in groups.values() for k in ks})
    if ungrouped:
        raise ValueError(f"rate knobs {ungrouped} are in no group: put their workloads in one")
    base.setdefault("topology", {}).setdefault("bottleneck", {})["rate_bps"] = UNCONGESTED_BPS
    cal = DirectionalCalibration(
        knobs=knobs,
        groups=groups,
        duration_s=float(base.get("duration_s", 60.0)),
        warmup_s=float(base.get("warmup_s", 0.0)),
        scenario_name=str(base.get("name", "")),
    )
    next_seed = seed

    def measure(factors: dict[str, float]) -> None:
        nonlocal next_seed
        sc = copy.deepcopy(base)
        _set_knobs(sc, {k: knobs[k] * factors[g] for g, ks in groups.items() for k in ks})
        result = run(sc, next_seed, progress=progress)
        mbps = {d: measure_load_mbps(result, d) for d in groups}
        cal.points.append(DirectionalPoint(factors=dict(factors), mbps=mbps, seed=next_seed))
        next_seed += 1

    ones = dict.fromkeys(groups, 1.0)
    measure(ones)
    for g in groups:
        if len(groups) > 1:
            measure({**ones, g: 0.5})
    cal.fit()
    unique = {tuple(sorted(t.items())): t for t in targets_mbps}
    if refine:
        for t in unique.values():
            measure(cal.factors_for(t))
        cal.fit()
    cal.targets = [(dict(t), cal.factors_for(t)) for t in unique.values()]
    return cal


# --- the warm-up a workload needs ------------------------------------------------------------


@dataclass
class Warmup:
    """The transient of a workload's delivered load on an uncongested link (:func:`warmup`).

    Attributes:
        direction: the direction measured (``down`` or ``up``).
        bin_s: width of the bins of ``series``.
        series: ``{seed: [Mb/s per bin from time 0]}``.
        truncation_s: ``{seed: MSER-5 truncation point (s)}``.
        warmup_s: the largest truncation point over the seeds: the warm-up to use.
        steady_mbps: mean delivered load after ``warmup_s``, over the seeds.
        at_limit: some seed's truncation point is the largest MSER-5 considers (half the
            run): the run is too short to show the end of the transient; run longer.
    """

    direction: str
    bin_s: float
    series: dict[int, list[float]]
    truncation_s: dict[int, float]
    warmup_s: float
    steady_mbps: float
    at_limit: bool

    def table(self, every_s: float = 100.0) -> list[tuple[float, float]]:
        """(start of period, mean Mb/s over seeds) per ``every_s`` of the run."""
        per = max(1, round(every_s / self.bin_s))
        n = min(len(s) for s in self.series.values())
        rows = []
        for i in range(0, n - per + 1, per):
            vals = [sum(s[i : i + per]) / per for s in self.series.values()]
            rows.append((i * self.bin_s, sum(vals) / len(vals)))
        return rows


def mser5(series: Sequence[float]) -> int:
    """MSER-5 truncation point of a time series, as an index into ``series``.

    The series is averaged in batches of 5; the truncation ``d`` (in batches, at most half of
    them) minimizes the squared standard error of the mean of the batches left,
    ``sum_{i>=d} (y_i - mean_d)^2 / (b - d)^2`` [White, Cobb, Spratt, "A comparison of five
    steady-state truncation heuristics for simulation", WSC 2000]. Returns ``5 d``.
    """
    b = len(series) // 5
    if b < 2:
        raise ValueError(f"MSER-5 needs at least 10 observations, got {len(series)}")
    batches = [sum(series[5 * i : 5 * i + 5]) / 5 for i in range(b)]
    best, best_d = math.inf, 0
    for d in range(b // 2 + 1):
        rest = batches[d:]
        m = sum(rest) / len(rest)
        stat = sum((y - m) ** 2 for y in rest) / len(rest) ** 2
        if stat < best:
            best, best_d = stat, d
    return 5 * best_d


def warmup(
    scenario: Any,
    *,
    duration_s: float = 3000.0,
    seeds: int = 4,
    bin_s: float = 10.0,
    direction: str = "down",
    progress: bool | None = False,
) -> Warmup:
    """Measure how long a workload takes to reach its steady load (the warm-up it needs).

    Runs the scenario on an uncongested 1 Gb/s bottleneck (as :func:`calibrate` does: the
    workload, not the queue, sets the transient) from an empty network, for ``duration_s`` with
    no warm-up, once per seed, records the load delivered in ``direction`` per ``bin_s``, and
    finds each run's end of transient with MSER-5 (:func:`mser5`). Heavy-tailed transfers and
    long sessions make the transient minutes long: a run whose warm-up is shorter measures a
    lower load than its calibration promises.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction ({direction!r}) must be 'down' or 'up'")
    if not (duration_s > 0 and math.isfinite(duration_s)) or not bin_s > 0:
        raise ValueError("duration_s and bin_s must be positive")
    if duration_s < 10 * bin_s:
        raise ValueError(f"duration_s ({duration_s}) must hold at least 10 bins of {bin_s} s")
    if seeds < 1:
        raise ValueError(f"seeds ({seeds}) must be at least 1")
    base = load_scenario(scenario) if not isinstance(scenario, dict) else copy.deepcopy(scenario)
    base.update(duration_s=duration_s, warmup_s=0.0)
    base.setdefault("topology", {}).setdefault("bottleneck", {})["rate_bps"] = UNCONGESTED_BPS
    base.setdefault("metrics", {})["interval_s"] = bin_s
    series: dict[int, list[float]] = {}
    for seed in range(1, seeds + 1):
        rows = [
            r
            for r in run(base, seed, progress=progress).links.to_pylist()
            if r["link"] == f"bottleneck_{direction}"
        ]
        series[seed] = [
            r["delivered_bytes"] * 8 / (r["t_end_s"] - r["t_start_s"]) / 1e6 for r in rows
        ]
    cut = {s: mser5(v) * bin_s for s, v in series.items()}
    w = max(cut.values())
    limit = min(5 * (len(v) // 5 // 2) for v in series.values()) * bin_s
    after = [x for v in series.values() for x in v[round(w / bin_s) :]]
    return Warmup(direction, bin_s, series, cut, w, sum(after) / len(after), w >= limit)
