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
    "calibrate",
    "load_calibration",
    "measure_load_mbps",
    "resolve_load",
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
_FORMAT = "ecnlab-calibration/1"


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


def load_calibration(path: str | Path) -> Calibration:
    """Read a calibration written by :func:`calibrate` (``Calibration.to_json``)."""
    p = Path(path)
    try:
        return Calibration.from_json(p.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(f"calibration file not found: {p}") from None
    except (KeyError, TypeError, json.JSONDecodeError) as e:
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
    if not isinstance(mbps, (int, float)) or not mbps > 0 or not math.isfinite(mbps):
        raise ValueError(f"load.offered_load_mbps ({mbps!r}) must be a positive number")
    path = load.get("calibration")
    if not isinstance(path, str):
        raise ValueError(  # noqa: TRY004
            f"load.calibration ({path!r}) must be the path of a calibration file (ecnlab calibrate)"
        )
    cal = load_calibration(Path(base_dir) / path)
    knobs = _knobs(out)
    if set(knobs) != set(cal.knobs) or any(not math.isclose(knobs[k], cal.knobs[k]) for k in knobs):
        raise ValueError(
            f"load.calibration ({path}) was made for knobs {cal.knobs}, the scenario has {knobs}: "
            "recalibrate (ecnlab calibrate)"
        )
    _set_knobs(out, cal.knob_values(float(mbps)))
    return out
