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
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

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

KNOBS: dict[str, str] = {
    "web_sessions": "session_rate_per_s",
    "exchanges": "arrival_rate_per_s",
    "packmime_http": "rate_per_s",
    "packet_source": "rate_pps",
    "tpcw_browsers": "browsers",
}
"""The rate field of each workload kind that calibration scales."""

UNCONGESTED_BPS = 1e9
DIRECTIONS = ("down", "up")
_FORMAT = "ecnlab-calibration/1"
_FORMAT_DIRECTIONS = "ecnlab-calibration-directions/1"


@dataclass
class CalibrationPoint:
    """One calibration run: the knob factor and the load it measured (Mb/s)."""

    factor: float
    mbps: float
    seed: int


@dataclass
class Calibration:
    """The result of :func:`calibrate`, stored as JSON.

    Attributes:
        knobs: ``{"workloads.I.FIELD": base value}`` of every scaled knob.
        direction: the loaded direction measured, ``down`` (servers to clients) or ``up``.
        duration_s, warmup_s: of the calibration runs.
        points: every run.
        slope_mbps: load per unit factor, fitted through the origin.
        targets: ``{target Mb/s: factor}``.
    """

    knobs: dict[str, float]
    direction: str
    duration_s: float
    warmup_s: float
    points: list[CalibrationPoint] = field(default_factory=list)
    slope_mbps: float = math.nan
    targets: dict[float, float] = field(default_factory=dict)
    scenario_name: str = ""

    def factor_for(self, mbps: float) -> float:
        """The knob factor that offers ``mbps``."""
        return mbps / self.slope_mbps

    def knob_values(self, mbps: float) -> dict[str, float]:
        """Every knob's value for a load of ``mbps``."""
        f = self.factor_for(mbps)
        return {k: v * f for k, v in self.knobs.items()}

    def fit(self) -> None:
        """Least squares through the origin on every point."""
        sff = sum(p.factor**2 for p in self.points)
        self.slope_mbps = sum(p.factor * p.mbps for p in self.points) / sff

    def to_json(self) -> str:
        d = asdict(self)
        d["format"] = _FORMAT
        d["targets"] = [
            {"target_mbps": t, "factor": f, "knobs": self.knob_values(t)}
            for t, f in self.targets.items()
        ]
        return json.dumps(d, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Calibration:
        d = json.loads(text)
        if d.get("format") != _FORMAT:
            raise ValueError(
                f"not an ecnlab calibration (format {d.get('format')!r}, expected {_FORMAT!r})"
            )
        return cls(
            knobs={k: float(v) for k, v in d["knobs"].items()},
            direction=d["direction"],
            duration_s=float(d["duration_s"]),
            warmup_s=float(d["warmup_s"]),
            points=[CalibrationPoint(**p) for p in d["points"]],
            slope_mbps=float(d["slope_mbps"]),
            targets={float(t["target_mbps"]): float(t["factor"]) for t in d["targets"]},
            scenario_name=d.get("scenario_name", ""),
        )


def _knobs(scenario: dict[str, Any]) -> dict[str, float]:
    knobs = {}
    for i, w in enumerate(scenario.get("workloads", [])):
        name = KNOBS.get(w.get("kind", "")) if isinstance(w, dict) else None
        if name is not None and name in w:
            knobs[f"workloads.{i}.{name}"] = float(w[name])
    return knobs


def _set_knobs(scenario: dict[str, Any], values: dict[str, float]) -> None:
    for path, v in values.items():
        _, i, name = path.split(".")
        # A population is a whole number of browsers.
        scenario["workloads"][int(i)][name] = max(1, round(v)) if name == "browsers" else v


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
    from ._run import run
    from ._scenario import load_scenario

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


def load_calibration(path: str | Path) -> Calibration | DirectionalCalibration:
    """Read a calibration written by :func:`calibrate` or :func:`calibrate_directions`."""
    p = Path(path)
    try:
        text = p.read_text()
        if json.loads(text).get("format") == _FORMAT_DIRECTIONS:
            return DirectionalCalibration.from_json(text)
        return Calibration.from_json(text)
    except FileNotFoundError:
        raise FileNotFoundError(f"calibration file not found: {p}") from None
    except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as e:
        raise ValueError(f"{p}: not a valid calibration ({e})") from None


def resolve_load(scenario: dict[str, Any], base_dir: str | Path = ".") -> dict[str, Any]:
    """Replace a ``[load]`` table by the knob values its calibration gives (a new dict).

    Raises:
        ValueError: the table is malformed, the calibration does not match the scenario's
            knobs, or the load is not positive.
    """
    if "load" not in scenario:
        return scenario
    out = copy.deepcopy(scenario)
    load = out.pop("load")
    if not isinstance(load, dict):
        # A user input error, reported like the other scenario errors (not TypeError).
        raise ValueError(  # noqa: TRY004
            f"load ({load!r}) must be a table with offered_load_mbps and calibration"
        )
    unknown = set(load) - {"offered_load_mbps", "calibration"}
    if unknown:
        raise ValueError(
            f"load.{min(unknown)}: unknown field (expected offered_load_mbps, calibration)"
        )
    mbps = load.get("offered_load_mbps")
    per_direction = isinstance(mbps, dict)
    if per_direction:
        _check_direction_loads(mbps, "load.offered_load_mbps")
    elif not _positive(mbps):
        raise ValueError(
            f"load.offered_load_mbps ({mbps!r}) must be a positive number "
            "(or a table { down = ..., up = ... } with a per-direction calibration)"
        )
    elif mbps > MAX_LOAD_MBPS:
        raise ValueError(_too_high("load.offered_load_mbps", mbps))
    path = load.get("calibration")
    if not isinstance(path, str):
        raise ValueError(  # noqa: TRY004
            f"load.calibration ({path!r}) must be the path of a calibration file (ecnlab calibrate)"
        )
    cal = load_calibration(Path(base_dir) / path)
    if per_direction != isinstance(cal, DirectionalCalibration):
        made = "per direction" if per_direction else "for one direction"
        raise ValueError(
            f"load.offered_load_mbps ({mbps!r}) is {made} but load.calibration ({path}) "
            + (
                "is per direction: give { down = ..., up = ... }"
                if not per_direction
                else "is for one direction: give one number"
            )
        )
    knobs = _knobs(out)
    if set(knobs) != set(cal.knobs) or any(not math.isclose(knobs[k], cal.knobs[k]) for k in knobs):
        raise ValueError(
            f"load.calibration ({path}) was made for knobs {cal.knobs}, the scenario has {knobs}: "
            "recalibrate (ecnlab calibrate)"
        )
    if isinstance(cal, DirectionalCalibration):
        assert isinstance(mbps, dict)
        if set(mbps) != set(cal.groups):
            raise ValueError(
                f"load.offered_load_mbps ({mbps!r}) must give the directions of the calibration "
                f"({', '.join(cal.groups)})"
            )
        _set_knobs(out, cal.knob_values({d: float(v) for d, v in mbps.items()}))
    else:
        _set_knobs(out, cal.knob_values(float(mbps)))
    return out


def _positive(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 and math.isfinite(v)


def _check_direction_loads(loads: Any, field: str) -> None:
    if not isinstance(loads, dict) or not loads or set(loads) - set(DIRECTIONS):
        raise ValueError(f"{field} ({loads!r}) must be a table of loads for down and/or up")
    for d, v in loads.items():
        if not _positive(v):
            raise ValueError(f"{field}.{d} ({v!r}) must be a positive number (Mb/s)")
        if v > MAX_LOAD_MBPS:
            raise ValueError(_too_high(f"{field}.{d}", v))


MAX_LOAD_MBPS = 1e6
"""The largest offered load (Mb/s): 1 Tb/s, the fastest link a scenario may have."""


def _too_high(field: str, v: float) -> str:
    return f"{field} ({v:g}) must be at most {MAX_LOAD_MBPS:g} Mb/s (1 Tb/s, the fastest link)"


@dataclass
class DirectionalPoint:
    """One run of :func:`calibrate_directions`: each group's factor and each direction's load."""

    factors: dict[str, float]
    mbps: dict[str, float]
    seed: int


@dataclass
class DirectionalCalibration:
    """The result of :func:`calibrate_directions`, stored as JSON.

    Attributes:
        knobs: ``{"workloads.I.FIELD": base value}`` of every scaled knob.
        groups: ``{direction: [knob paths]}``: the knobs that direction's factor scales.
        duration_s, warmup_s: of the calibration runs.
        points: every run.
        matrix_mbps: ``{measured direction: {group: Mb/s per unit factor}}``, fitted through
            the origin on every point.
        targets: every ``({direction: Mb/s}, {group: factor})`` asked for.
    """

    knobs: dict[str, float]
    groups: dict[str, list[str]]
    duration_s: float
    warmup_s: float
    points: list[DirectionalPoint] = field(default_factory=list)
    matrix_mbps: dict[str, dict[str, float]] = field(default_factory=dict)
    targets: list[tuple[dict[str, float], dict[str, float]]] = field(default_factory=list)
    scenario_name: str = ""

    def fit(self) -> None:
        """Least squares through the origin, one row of the matrix per measured direction."""
        import numpy as np

        gs = list(self.groups)
        x = np.array([[p.factors[g] for g in gs] for p in self.points])
        for d in self.groups:
            y = np.array([p.mbps[d] for p in self.points])
            row, *_ = np.linalg.lstsq(x, y, rcond=None)
            self.matrix_mbps[d] = {g: float(v) for g, v in zip(gs, row)}

    def factors_for(self, mbps: dict[str, float]) -> dict[str, float]:
        """Each group's factor that offers ``mbps`` (``{direction: Mb/s}``) in every direction.

        Raises:
            ValueError: the directions differ from the calibration's, or a factor would not be
                positive (the targets are out of reach of these workloads).
        """
        import numpy as np

        gs = list(self.groups)
        if set(mbps) != set(gs):
            raise ValueError(f"loads ({mbps}) must name the directions {', '.join(gs)}")
        a = np.array([[self.matrix_mbps[d][g] for g in gs] for d in gs])
        f = np.linalg.solve(a, np.array([mbps[d] for d in gs]))
        if not all(v > 0 for v in f):
            raise ValueError(
                f"loads {mbps} need non-positive factors {dict(zip(gs, f.tolist()))}: the "
                "workloads cannot offer them"
            )
        return {g: float(v) for g, v in zip(gs, f)}

    def knob_values(self, mbps: dict[str, float]) -> dict[str, float]:
        """Every knob's value for the loads ``mbps`` (``{direction: Mb/s}``)."""
        f = self.factors_for(mbps)
        return {k: self.knobs[k] * f[g] for g, ks in self.groups.items() for k in ks}

    def to_json(self) -> str:
        d = asdict(self)
        d["format"] = _FORMAT_DIRECTIONS
        d["targets"] = [
            {"target_mbps": t, "factors": f, "knobs": self.knob_values(t)} for t, f in self.targets
        ]
        return json.dumps(d, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str) -> DirectionalCalibration:
        d = json.loads(text)
        if d.get("format") != _FORMAT_DIRECTIONS:
            raise ValueError(
                f"not a per-direction ecnlab calibration (format {d.get('format')!r}, "
                f"expected {_FORMAT_DIRECTIONS!r})"
            )
        return cls(
            knobs={k: float(v) for k, v in d["knobs"].items()},
            groups={g: list(ks) for g, ks in d["groups"].items()},
            duration_s=float(d["duration_s"]),
            warmup_s=float(d["warmup_s"]),
            points=[DirectionalPoint(**p) for p in d["points"]],
            matrix_mbps={
                m: {g: float(v) for g, v in row.items()} for m, row in d["matrix_mbps"].items()
            },
            targets=[(t["target_mbps"], t["factors"]) for t in d["targets"]],
            scenario_name=d.get("scenario_name", ""),
        )


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
    from ._run import run
    from ._scenario import load_scenario

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
    from ._run import run
    from ._scenario import load_scenario

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
