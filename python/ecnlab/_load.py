"""Stored calibrations and the ``[load]`` table: reading a calibration file and setting a
scenario's rate knobs from it (no simulation runs here; :mod:`ecnlab.calibration` makes the
calibrations and re-exports these names)."""

from __future__ import annotations

import copy
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

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
