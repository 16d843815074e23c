"""Seed 004: Le, Aikat, Jeffay, Smith, "Differential Congestion Notification: Taming the Elephants".

Two routers joined by 100 Mb/s in each direction carry PackMime-HTTP traffic (HTTP/1.1 with
persistent connections) at offered loads of 90, 98 and 105 Mb/s, calibrated on an uncongested
1 Gb/s link, under drop-tail (240 packets), PI (q_ref 24), DCN (q_ref 24), AFD (q_ref 240) and
RIO-PS, with and without ECN; then a general TCP mix with asymmetric load (105.3 Mb/s forward,
91.2 Mb/s reverse). Write-up: ``docs/reproduction/dcn.md``.

Parts (each a sweep over load x scheme and seeds, with the uncongested 1 Gb/s network as the
reference of the parts without ECN):

* ``http``: drop-tail, PI, DCN, AFD, RIO-PS, endpoints without ECN, and the uncongested network;
* ``http-ecn``: PI, AFD and RIO-PS marking, endpoints with ECN;
* ``tcp-mix`` and ``tcp-mix-ecn``: the same split for the general TCP workload (Table 2's
  drop-tail and DCN, then PI/ECN, AFD/ECN and RIO-PS/ECN).

Response times are those of every exchange that started in the measurement window; one that has
not finished at the end of the run is a right-censored observation (it takes at least its
``elapsed_s``). Every response-time measure comes from the Kaplan-Meier estimate
(:func:`ecnlab.analysis.kaplan_meier`): the CDF ``F(x)`` at every millisecond up to 2 s (the
paper's CDFs stop at 2 s) and the mean restricted to 2 s, the area above that CDF on [0, 2 s].
Claims are decided by the one rule of :mod:`.verdict` on per-seed quantities.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..analysis import kaplan_meier, restricted_mean
from ._study import (
    Findings,
    OperatingPoint,
    Results,
    SeedPlan,
    Study,
    calibrated_load,
)
from .verdict import (
    CONFIDENCE,
    ClaimSpec,
    Frames,
    Quantity,
    Test,
    above,
    below,
    between,
    combine,
    measure,
    t_interval,
)

__all__ = ["CLAIMS", "STUDY", "DcnStudy", "run_measures"]

DATA = Path(__file__).parent / "data" / "dcn"

LOADS = (90, 98, 105)
"""Offered loads (Mb/s on an uncongested 1 Gb/s link, i.e. % of the 100 Mb/s link)."""

MIX_LOAD = 0
"""The ``load`` of the general TCP mix's runs (one asymmetric load: :data:`MIX_TARGET_MBPS`)."""

MIX_TARGET_MBPS = {"down": 105.3, "up": 91.2}
"""Seed 004 section 5.2: the mix's offered load, forward (down) and reverse (up)."""

AQM_LIMIT_PKTS = 5000
"""Hard limit of the AQM queues: large enough that they never tail-drop (checked in Table 1)."""

HORIZON_S = 2.0
"""The paper's CDFs stop at 2 s: the horizon of the restricted mean response time."""

GRID_S = np.round(np.arange(1, 2001) * 0.001, 3)
"""Where each run's Kaplan-Meier CDF is kept: every millisecond up to :data:`HORIZON_S`."""

LOG_GRID_S = np.logspace(-2, 3, 101)
"""A log grid from 10 ms to 1000 s, for the CCDF (Fig. 20) and the large responses (16, 18)."""

SIZE_GRID_B = np.logspace(2, 8, 61)
"""Response sizes from 100 B to 100 MB (tenths of a decade), for Figs. 10, 12, 14."""

QUANTILES = np.round(np.arange(1, 100) * 0.01, 2)
"""Probabilities at which the response times of large responses are compared (Figs. 16, 18)."""

SMALL_BYTES = 100_000
"""Figures 15-18 split responses at 100,000 bytes."""

PAPER_WINDOW_S = 5400.0
"""The paper measures 90 minutes of each 120-minute run."""

UNCONGESTED = "uncongested"


def _queue(kind: str, ecn: bool = False, **params: Any) -> dict[str, Any]:
    if kind == "droptail":
        return {"limit_pkts": 240}
    aqm: dict[str, Any] = {"kind": kind, **params}
    if ecn:
        aqm["ecn"] = True
    return {"limit_pkts": AQM_LIMIT_PKTS, "aqm": aqm}


# The schemes of seed 004 section 5: (label, queue). RIO-PS keeps its inventors' defaults.
HTTP_PLAIN = (
    ("drop-tail", _queue("droptail")),
    ("PI", _queue("pi", q_ref_pkts=24)),
    ("DCN", _queue("dcn", q_ref_pkts=24)),
    ("AFD", _queue("afd", q_target_pkts=240)),
    ("RIO-PS", _queue("rio_ps")),
)
HTTP_ECN = (
    ("PI/ECN", _queue("pi", True, q_ref_pkts=24)),
    ("AFD/ECN", _queue("afd", True, q_target_pkts=240)),
    ("RIO-PS/ECN", _queue("rio_ps", True)),
)
# Table 2: PI/ECN and AFD/ECN with q_ref 240, DCN with 24.
MIX_PLAIN = (
    ("drop-tail", _queue("droptail")),
    ("DCN", _queue("dcn", q_ref_pkts=24)),
)
MIX_ECN = (
    ("PI/ECN", _queue("pi", True, q_ref_pkts=240)),
    ("AFD/ECN", _queue("afd", True, q_target_pkts=240)),
    ("RIO-PS/ECN", _queue("rio_ps", True)),
)
HTTP_SCHEMES = tuple(s for s, _ in HTTP_PLAIN + HTTP_ECN)
"""The eight congested configurations of Table 1."""
MIX_SCHEMES = tuple(s for s, _ in MIX_PLAIN + MIX_ECN)
"""The five congested configurations of Table 2."""
AQMS = tuple(s for s in HTTP_SCHEMES if s != "drop-tail")

WARMUP_S = {"http": 300.0, "tcp-mix": 750.0}
"""Warm-up of each workload (s), from ``ecnlab warmup`` and the transient derived from the size
distributions (docs/reproduction/dcn.md, "Warm-up"). PackMime's download sizes have a Pareto
tail (index 1.23) that never ends, so its load approaches its long-run mean only as a power of
time; after 300 s the load still rises, but by about 1.6% over a 600-second window, and the
calibration is made over the same warm-up and window as the runs."""

WINDOW_S = {
    "quick": {"http": 300.0, "tcp-mix": 600.0},
    "full": {"http": 600.0, "tcp-mix": 900.0},
}
"""Measured window per mode and workload (s), after the warm-up."""

CALIBRATION = {
    "quick": {"http": "http.quick.calibration.json", "tcp-mix": "tcp-mix.calibration.json"},
    "full": {"http": "http.calibration.json", "tcp-mix": "tcp-mix.calibration.json"},
}
"""The load calibration each mode's runs use (files in :data:`DATA`; provenance in
calibration-provenance.md there). A calibration holds for the warm-up and window it was
measured over: PackMime's load still grows with the age of the run (an unbounded Pareto tail),
so each HTTP window has its own calibration (the quick mode's 300-s window measured 0.6% below
the full mode's 600-s window). The mix is stationary after its warm-up (transient.py), so one
calibration, over the full mode's window, serves both."""

QUICK_SCHEMES = {
    "http": ("drop-tail", "DCN", "PI/ECN"),
    "tcp-mix": ("drop-tail", "DCN", "RIO-PS/ECN"),
}
"""The quick mode runs the uncongested network and these schemes only (the paper's headline
comparison at every load), at the full mode's operating point; claims about the others stay
unresolved (no runs) in quick mode."""

SEEDS = {"quick": SeedPlan(5, 0, 5), "full": SeedPlan(5, 2, 7)}
"""Seeds per mode (start, step, cap): docs/reproduction/dcn.md, "Quick and full modes, warm-ups". Both modes
start with five: a reference run's HTTP load scatters by 3.3% (one standard deviation, 15
calibration runs), so the mean of three misses a correct calibration by more than the 3%
tolerance of the operating point with probability 0.12 (normal approximation), the mean of
five with 0.04."""


def _sweep(
    name: str,
    base: str,
    schemes: tuple[tuple[str, dict[str, Any]], ...],
    mode: str,
    *,
    ecn: bool,
    loads: Sequence[int] | None,
    reference: bool,
) -> dict[str, Any]:
    workload = "http" if base == "http.toml" else "tcp-mix"
    warmup, window = WARMUP_S[workload], WINDOW_S[mode][workload]
    if mode == "quick":
        schemes = tuple((s, q) for s, q in schemes if s in QUICK_SCHEMES[workload])
    sweep: dict[str, Any] = {
        "name": name,
        "base": base,
        "set": {
            "duration_s": warmup + window,
            "warmup_s": warmup,
            "tcp.ecn": ecn,
            "load.calibration": CALIBRATION[mode][workload],
        },
        "axes": [],
    }
    if loads is not None:
        sweep["axes"].append(
            {
                "name": "load",
                "path": "load.offered_load_mbps",
                "values": list(loads),
                "labels": [f"{v}%" for v in loads],
            }
        )
    sweep["axes"].append(
        {
            "name": "scheme",
            "path": "topology.bottleneck.queue",
            "values": [q for _, q in schemes],
            "labels": [label for label, _ in schemes],
        }
    )
    if reference:
        sweep["reference"] = {
            "label": UNCONGESTED,
            "vary": ["load"] if loads is not None else [],
            "set": {"topology.bottleneck.rate_bps": 1e9},
        }
    return sweep


PARTS = ("http", "http-ecn", "tcp-mix", "tcp-mix-ecn")


def _part_of(scheme: str, workload: str) -> str:
    """The part whose runs hold ``scheme`` (the uncongested runs are in the non-ECN parts)."""
    ecn = scheme.endswith("/ECN")
    return f"{workload}-ecn" if ecn else workload


# --------------------------------------------------------------------------- per-run measures


def km_curve(times: np.ndarray, done: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The Kaplan-Meier ``F(x) = P(X <= x)`` at each ``x`` of ``grid`` (NaN without data and
    beyond the longest observation)."""
    if len(times) == 0:
        return np.full(len(grid), math.nan)
    km = kaplan_meier(times, done)
    x, p = km["x"].to_numpy(), km["p"].to_numpy()
    i = np.searchsorted(x, grid, side="right")
    f = np.where(i > 0, p[np.maximum(i - 1, 0)], 0.0)
    # Beyond the longest observation the estimate says nothing.
    return np.where(grid <= np.max(times), f, math.nan)


def km_quantiles(times: np.ndarray, done: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """The Kaplan-Meier quantiles ``min {x : F(x) >= p}``; +inf where the estimate never reaches
    ``p`` (too many unfinished exchanges to place it), NaN without data."""
    if len(times) == 0:
        return np.full(len(probs), math.nan)
    km = kaplan_meier(times, done)
    x, p = km["x"].to_numpy(), km["p"].to_numpy()
    i = np.searchsorted(p, probs - 1e-12, side="left")
    return np.where(i < len(x), x[np.minimum(i, len(x) - 1)], math.inf)


def run_measures(exchanges: pd.DataFrame, *, sizes: bool) -> dict[str, Any]:
    """What the claims and figures need from one run's exchanges (columns ``elapsed_s``,
    ``completed``, ``response_bytes``).

    Response times (Kaplan-Meier, unfinished exchanges right-censored at ``elapsed_s``):
    ``cdf`` (``F`` at :data:`GRID_S`), ``cdf_log`` (at :data:`LOG_GRID_S`), ``rm2_s`` (the mean
    restricted to 2 s), ``f_0.5``/``f_1``/``f_2``; for responses up to 100 kB ``cdf_small`` and
    ``rm2_small_s``; for larger ones ``large_q`` (quantiles at :data:`QUANTILES`) and
    ``cdf_large_log``. Counts: ``exchanges``, ``completed``, ``unfinished`` (and per size class).
    With ``sizes`` (the HTTP workload, whose response sizes are the objects), the size
    distribution of every exchange that started in the window (``n_le_1e4``: share of responses
    up to 10 kB, ``b_le_1e4``: their share of the bytes, ``n_gt_1e5``, ``n_gt_1e6``,
    ``b_gt_1e6``) and ``bytes_done``: the share of the bytes of *completed* responses that is in
    responses up to each size of :data:`SIZE_GRID_B` (Figs. 10, 12, 14, which count what
    completed; the unfinished count is beside it).
    """
    t = exchanges["elapsed_s"].to_numpy(dtype=float)
    done = exchanges["completed"].to_numpy(dtype=bool)
    size = exchanges["response_bytes"].to_numpy(dtype=float)
    small = size <= SMALL_BYTES
    out: dict[str, Any] = {
        "exchanges": len(t),
        "completed": int(done.sum()),
        "unfinished": int((~done).sum()),
        "unfinished_small": int((~done & small).sum()),
        "n_large": int((~small).sum()),
        "unfinished_large": int((~done & ~small).sum()),
    }
    cdf = km_curve(t, done, GRID_S)
    out["cdf"] = cdf
    for x in (0.5, 1.0, 2.0):
        out[f"f_{x:g}"] = float(cdf[round(x * 1000) - 1])
    out["rm2_s"] = restricted_mean(t, done, HORIZON_S) if len(t) else math.nan
    out["cdf_log"] = km_curve(t, done, LOG_GRID_S)
    out["cdf_small"] = km_curve(t[small], done[small], GRID_S)
    out["rm2_small_s"] = (
        restricted_mean(t[small], done[small], HORIZON_S) if small.any() else math.nan
    )
    out["large_q"] = km_quantiles(t[~small], done[~small], QUANTILES)
    out["cdf_large_log"] = km_curve(t[~small], done[~small], LOG_GRID_S)
    if sizes:
        total = size.sum()
        out["n_le_1e4"] = float(np.mean(size <= 1e4)) if len(size) else math.nan
        out["n_gt_1e5"] = float(np.mean(size > 1e5)) if len(size) else math.nan
        out["n_gt_1e6"] = float(np.mean(size > 1e6)) if len(size) else math.nan
        out["b_le_1e4"] = float(size[size <= 1e4].sum() / total) if total else math.nan
        out["b_gt_1e6"] = float(size[size > 1e6].sum() / total) if total else math.nan
        d = np.sort(size[done])
        cum = np.cumsum(d)
        at = np.searchsorted(d, SIZE_GRID_B, side="right")
        share = np.where(at > 0, cum[np.maximum(at - 1, 0)], 0.0) / cum[-1] if len(d) else None
        out["bytes_done"] = share if share is not None else np.full(len(SIZE_GRID_B), math.nan)
        for s in (1e5, 1e6):
            out[f"done_le_{s:.0e}".replace("+0", "")] = float(
                out["bytes_done"][int(np.argmin(np.abs(SIZE_GRID_B - s)))]
            )
    return out


# --------------------------------------------------------------------------- claim quantities


def _rows(frames: Frames, part: str, load: int, scheme: str) -> dict[int, pd.Series]:
    """The run of ``scheme`` at ``load`` per seed (exactly one per seed, else ValueError)."""
    if part not in frames:
        raise KeyError(f"no measures of part {part!r} (have {', '.join(frames)})")
    f = frames[part]
    rows = f[(f["load"] == load) & (f["scheme"] == scheme)]
    if rows["seed"].duplicated().any():
        raise ValueError(f"{part}: several runs per seed for {scheme} at load {load}")
    return {int(r["seed"]): r for _, r in rows.iterrows()}


def _workload(load: int) -> str:
    return "tcp-mix" if load == MIX_LOAD else "http"


def _where(scheme: str, load: int) -> str:
    return f"{scheme} at {load}%" if load != MIX_LOAD else f"{scheme} (general TCP mix)"


def m(column: str, scheme: str, load: int, text: str | None = None) -> Quantity:
    """A per-run measure of one configuration, per seed."""
    part = _part_of(scheme, _workload(load))
    return measure(
        part, column, text or f"{column} of {_where(scheme, load)}", load=load, scheme=scheme
    )


def _curves(
    schemes: Sequence[str],
    load: int,
    column: str,
    f: Callable[[list[np.ndarray]], float],
    text: str,
) -> Quantity:
    """A per-seed function of several configurations' array measures (``cdf``, ``large_q``),
    paired by seed; a seed that some configuration lacks gives NaN (reported, not hidden)."""
    parts = frozenset(_part_of(s, _workload(load)) for s in schemes)

    def fn(frames: Frames) -> dict[int, float]:
        per = [_rows(frames, _part_of(s, _workload(load)), load, s) for s in schemes]
        seeds = sorted(set().union(*(set(p) for p in per)))
        out = {}
        for seed in seeds:
            if not all(seed in p for p in per):
                out[seed] = math.nan
                continue
            out[seed] = float(f([np.asarray(p[seed][column], dtype=float) for p in per]))
        return out

    return Quantity(text, parts, fn)


def cdf_distance(a: str, b: str, load: int) -> Quantity:
    """The largest vertical distance between the response-time CDFs of ``a`` and ``b`` over
    (0, 2 s] (every millisecond), in probability units."""
    return _curves(
        (a, b),
        load,
        "cdf",
        lambda c: np.nanmax(np.abs(c[0] - c[1])),
        f"max |F({a}) - F({b})| over 0-2 s at {load}%",
    )


def cdf_excess(a: str, b: str, load: int) -> Quantity:
    """How far the response-time CDF of ``a`` rises above that of ``b`` at most, over (0, 2 s]
    (0 when ``a``'s is nowhere above): ``b``'s shortfall against ``a``."""
    return _curves(
        (a, b),
        load,
        "cdf",
        lambda c: max(0.0, float(np.nanmax(c[0] - c[1]))),
        f"max(0, F({a}) - F({b})) over 0-2 s, {_where('', load).strip()}",
    )


def faster(
    a: str | Sequence[str], b: str | Sequence[str], load: int, column: str = "rm2_s"
) -> Quantity:
    """log10 of (restricted mean response time of ``b``) over that of ``a``: positive when ``a``
    is faster. A sequence stands for the better (per seed) of its configurations, e.g. a scheme
    with and without ECN (the paper's "best performing version")."""

    def side(x: str | Sequence[str]) -> Quantity:
        names = [x] if isinstance(x, str) else list(x)
        qs = [m(column, s, load) for s in names]
        if len(qs) == 1:
            return qs[0]
        return combine(qs, min, f"best of {', '.join(names)} ({column} at {load}%)")

    qa, qb = side(a), side(b)
    label = column.replace("_s", "")
    an = a if isinstance(a, str) else "best of " + "/".join(a)
    bn = b if isinstance(b, str) else "best of " + "/".join(b)
    return (qb / qa).log10().named(f"log10({label} {bn} / {label} {an}) {_where('', load).strip()}")


def ratio_to_uncongested(column: str, scheme: str, load: int) -> Quantity:
    """log10 of a measure of ``scheme`` over that of the uncongested network, same seed."""
    return (
        (m(column, scheme, load) / m(column, UNCONGESTED, load))
        .log10()
        .named(f"log10({column} {scheme} / uncongested) {_where('', load).strip()}")
    )


def loss_growth(scheme: str) -> Quantity:
    """Loss rate at 105% minus at 90% (percentage points)."""
    return (m("loss_down_pct", scheme, 105) - m("loss_down_pct", scheme, 90)).named(
        f"loss {scheme} 105% - 90% (points)"
    )


def dcn_faster_share(load: int) -> Quantity:
    """Share of the probabilities 1-99% at which the Kaplan-Meier quantile of the response
    time of responses over 100 kB is lower under DCN than under every other scheme."""
    others = [s for s in HTTP_SCHEMES if s != "DCN"]

    def share(qs: list[np.ndarray]) -> float:
        best_other = np.min(np.vstack(qs[1:]), axis=0)
        return float(np.mean(qs[0] < best_other))

    return _curves(
        ["DCN", *others],
        load,
        "large_q",
        share,
        f"share of quantiles of > 100 kB response times where DCN is faster than every other scheme at {load}%",
    )


# --------------------------------------------------------------------------- the claims

CLOSE = 0.05
"""A "close" response-time CDF: within 5 percentage points of the other at every response time
up to 2 s. The paper judges its CDF plots by eye; 5 points is the vertical gap we read as
"close", "not significantly degraded", "comparable" or "little", and beyond which we read
"significant degradation". With 10^5-10^6 exchanges per run the sampling error of a CDF is
below 0.3 points, so the margin is a reading of the paper's words, not noise; it is fixed once
for every such claim so that it cannot be tuned claim by claim."""

EQUAL = 0.02
"""An "equal" CDF, or "almost no" difference: at most 2 points apart (about the line width of
the paper's plots)."""

LOSS_FACTOR = 1.5
"""A loss rate reproduces the paper's if it is within a factor 1.5 of it. The paper's loss
contrasts are factors of 2-3 (drop-tail 8.8% against DCN 3.0% at 105%; AFD 0.5% at 90% against
8.9% at 105%): a band of x/÷ 1.5 keeps those apart, and is wider than the repeatability of one
testbed number (its rows differ by 0.1-0.3 points between the ECN and non-ECN runs of AFD)."""

TABLE_BAND = math.log10(1.03)
"""Completed exchanges and throughput relative to the uncongested network, reproduced within
3%: the tolerance of the operating point itself (a reference run may deliver its calibrated
load within 3%), so a tighter band would test the calibration, not the scheme."""

SHARE_BAND = 0.15
"""The paper reads "approximately 75%" and "about 40%" off its Figures 16 and 18; responses
over 100 kB are under 1% of all, so a run holds a few hundred to a few thousand of them and
their quantiles scatter: +/- 0.15."""


def _loss_band(paper: float) -> Any:
    return between(paper / LOSS_FACTOR, paper * LOSS_FACTOR)


def _log_band(paper_ratio: float, half: float = TABLE_BAND) -> Any:
    return between(math.log10(paper_ratio) - half, math.log10(paper_ratio) + half)


# Seed 004 Table 1: (scheme, load) -> (loss %, completed millions, Mb/s).
PAPER_TABLE1: dict[tuple[str, int], tuple[float, float, float]] = {
    (UNCONGESTED, 90): (0.0, 15.0, 91.3),
    (UNCONGESTED, 98): (0.0, 16.2, 98.2),
    (UNCONGESTED, 105): (0.0, 17.3, 105.9),
    ("drop-tail", 90): (1.8, 14.6, 89.9),
    ("drop-tail", 98): (6.0, 15.1, 92.0),
    ("drop-tail", 105): (8.8, 15.0, 92.4),
    ("PI", 90): (1.3, 14.4, 87.9),
    ("PI", 98): (3.9, 15.1, 89.3),
    ("PI", 105): (6.5, 15.1, 89.9),
    ("PI/ECN", 90): (0.3, 14.6, 88.6),
    ("PI/ECN", 98): (1.8, 14.9, 89.4),
    ("PI/ECN", 105): (2.5, 15.0, 89.5),
    ("DCN", 90): (0.95, 14.5, 86.1),
    ("DCN", 98): (2.3, 14.9, 88.6),
    ("DCN", 105): (3.0, 15.3, 90.5),
    ("AFD", 90): (0.5, 14.7, 88.3),
    ("AFD", 98): (6.1, 14.5, 87.6),
    ("AFD", 105): (8.9, 14.6, 87.8),
    ("AFD/ECN", 90): (0.5, 14.6, 88.3),
    ("AFD/ECN", 98): (6.2, 14.5, 87.9),
    ("AFD/ECN", 105): (9.2, 14.4, 87.9),
    ("RIO-PS", 90): (2.1, 14.6, 88.8),
    ("RIO-PS", 98): (5.3, 15.0, 91.2),
    ("RIO-PS", 105): (8.2, 15.3, 91.9),
    ("RIO-PS/ECN", 90): (1.3, 14.6, 87.9),
    ("RIO-PS/ECN", 98): (4.7, 15.2, 91.0),
    ("RIO-PS/ECN", 105): (7.9, 15.3, 91.9),
}

# Seed 004 Table 2: scheme -> (completed millions, fwd loss %, rev loss %, fwd Mb/s, rev Mb/s).
PAPER_TABLE2: dict[str, tuple[float, float, float, float, float]] = {
    UNCONGESTED: (2.75, 0.0, 0.0, 105.3, 91.2),
    "drop-tail": (2.62, 3.7, 0.9, 90.8, 85.7),
    "PI/ECN": (2.69, 0.2, 0.1, 88.5, 84.4),
    "DCN": (2.60, 1.0, 0.6, 89.4, 83.3),
    "AFD/ECN": (2.67, 4.5, 0.7, 87.5, 80.2),
    "RIO-PS/ECN": (2.66, 3.4, 1.0, 91.0, 83.5),
}


def _table1_tests(column: int, make: Callable[[str, int, float], Test]) -> dict[str, Test]:
    return {
        f"{s} {load}%": make(s, load, PAPER_TABLE1[(s, load)][column])
        for load in LOADS
        for s in HTTP_SCHEMES
    }


def _t1_relative(index: int, measure_col: str) -> dict[str, Test]:
    def make(s: str, load: int, paper: float) -> Test:
        ref = PAPER_TABLE1[(UNCONGESTED, load)][index]
        return Test(ratio_to_uncongested(measure_col, s, load), _log_band(paper / ref))

    return _table1_tests(index, make)


def _t1_paper(index: int) -> dict[str, float]:
    return {f"{s} {load}%": PAPER_TABLE1[(s, load)][index] for load in LOADS for s in HTTP_SCHEMES}


def _t1_paper_ratio(index: int) -> dict[str, float]:
    return {
        f"{s} {load}%": round(
            PAPER_TABLE1[(s, load)][index] / PAPER_TABLE1[(UNCONGESTED, load)][index], 4
        )
        for load in LOADS
        for s in HTTP_SCHEMES
    }


def _t2_relative(index: int, measure_col: str, schemes: Iterable[str]) -> dict[str, Test]:
    return {
        s: Test(
            ratio_to_uncongested(measure_col, s, MIX_LOAD),
            _log_band(PAPER_TABLE2[s][index] / PAPER_TABLE2[UNCONGESTED][index]),
        )
        for s in schemes
    }


CLAIMS: tuple[ClaimSpec, ...] = (
    # ---------------------------------------------------------------- the workload (Figs. 1, 2)
    ClaimSpec(
        id="workload-response-sizes",
        statement="About 90% of the HTTP responses are 10 kB or less and carry under 25% of the "
        "bytes; responses over 1 MB are under 1% of them but carry about 25% of the bytes; "
        "responses over 100 kB are under 1%",
        quote="approximately 90% of web responses are 10,000 bytes or less, these responses account "
        "for less than 25% of the bytes transferred during an experiment. Moreover, responses "
        "greater than 1 megabyte make up less than 1% of all responses, but account for 25% of the "
        "total bytes. [...] flows with object sizes greater than 100,000 bytes comprise less than "
        "1% of the total number of flows",
        location="section 3, Figures 1 and 2; section 5.1",
        paper={
            "<= 10 kB": 0.90,
            "bytes <= 10 kB": "< 0.25",
            "> 1 MB": "< 0.01",
            "bytes > 1 MB": 0.25,
            "> 100 kB": "< 0.01",
        },
        tests={
            "responses <= 10 kB": Test(m("n_le_1e4", UNCONGESTED, 90), between(0.85, 0.95)),
            "bytes <= 10 kB": Test(m("b_le_1e4", UNCONGESTED, 90), below(0.25)),
            "responses > 1 MB": Test(m("n_gt_1e6", UNCONGESTED, 90), below(0.01)),
            "bytes > 1 MB": Test(m("b_gt_1e6", UNCONGESTED, 90), between(0.20, 0.30)),
            "responses > 100 kB": Test(m("n_gt_1e5", UNCONGESTED, 90), below(0.01)),
        },
        justification="The sizes of every response that started in the window of the uncongested "
        "90% runs (the workload, before any queue acts). 'Approximately 90%' and '25%' are read "
        "as +/- 5 points; the bounds ('less than') are the paper's. This is the premise of DCN "
        "(few large flows carry the bytes); ecnlab's PackMime uses ns-2's tables, not the UNC "
        "traces of the paper.",
    ),
    # ---------------------------------------------------------------- Figure 5: DCN
    ClaimSpec(
        id="fig5-dcn-near-uncongested",
        statement="At every load DCN's response-time CDF is close to the uncongested network's; "
        "it degrades as the load grows, but little",
        quote="Figure 5 shows that at all loads, the performance of HTTP flows under DCN is close "
        "to that obtained on the uncongested network. Although DCN performance decreases as load "
        "increases, the performance degradation of DCN is rather small",
        location="section 5.1, Figure 5",
        paper=None,
        tests={
            **{
                f"close {load}%": Test(cdf_distance("DCN", UNCONGESTED, load), below(CLOSE))
                for load in LOADS
            },
            "degrades with load": Test(
                (
                    cdf_distance("DCN", UNCONGESTED, 105) - cdf_distance("DCN", UNCONGESTED, 90)
                ).named("DCN's CDF distance to uncongested at 105% minus at 90%"),
                above(0),
            ),
        },
        justification=f"'Close' is the largest vertical distance between the CDFs up to 2 s below "
        f"{CLOSE} (see CLOSE); 'decreases as load increases' is that distance growing from 90% "
        "to 105%.",
        figure="fig5-dcn",
    ),
    ClaimSpec(
        id="all-but-droptail-good-at-90",
        statement="At 90% load every AQM, with or without ECN, is close to the uncongested "
        "network; drop-tail is not",
        quote="At 90% load all the algorithms except drop-tail perform quite well and provide "
        "response times that are not significantly degraded over the uncongested case.",
        location="section 5.1, Figure 9",
        paper=None,
        tests={
            **{f"{s} close": Test(cdf_distance(s, UNCONGESTED, 90), below(CLOSE)) for s in AQMS},
            "drop-tail degraded": Test(cdf_distance("drop-tail", UNCONGESTED, 90), above(CLOSE)),
        },
        justification=f"'Not significantly degraded' is a CDF within {CLOSE} of the uncongested "
        "one at every response time up to 2 s (CLOSE); 'except drop-tail' says drop-tail's is "
        "further.",
        figure="fig9-all-90",
    ),
    ClaimSpec(
        id="dcn-vs-pi-ecn",
        statement="At 98% and 105% load DCN without ECN is equal or superior to PI with ECN: "
        "PI/ECN's response-time CDF is nowhere above DCN's (beyond 2 points)",
        quote="However, in both cases, DCN, even without ECN, provides performance that is equal "
        "or superior to PI with ECN.",
        location="section 5.1, Figures 11 and 13",
        paper=None,
        tests={
            f"{load}%": Test(cdf_excess("PI/ECN", "DCN", load), below(EQUAL)) for load in (98, 105)
        },
        justification=f"'Equal or superior' over the whole plotted CDF: PI/ECN's curve may rise "
        f"above DCN's by at most {EQUAL} (EQUAL, the plots' resolution) at any response time up "
        "to 2 s, at both loads.",
        figure="fig11-all-98",
    ),
    ClaimSpec(
        id="dcn-pi-ecn-superior",
        statement="At 98% and 105% load DCN and PI/ECN each have lower response times than every "
        "other AQM (PI, AFD, AFD/ECN, RIO-PS, RIO-PS/ECN)",
        quote="At loads of 98% and 105% there is clear performance superiority for DCN and PI with "
        "ECN over the other AQMs.",
        location="section 5.1, Figures 11 and 13",
        paper=None,
        tests={
            f"{a} {load}%": Test(
                faster(a, ("PI", "AFD", "AFD/ECN", "RIO-PS", "RIO-PS/ECN"), load), above(0)
            )
            for load in (98, 105)
            for a in ("DCN", "PI/ECN")
        },
        justification="An ordering of the restricted mean response time (the area above the CDF "
        "up to 2 s) against the best of the other AQMs per seed; the paper gives no size for "
        "'clear'.",
        figure="fig13-all-105",
    ),
    ClaimSpec(
        id="best-aqm-beat-droptail",
        statement="At every load the best AQMs (DCN and PI/ECN) have lower response times than "
        "drop-tail",
        quote="For the vast majority of flows, the best AQM designs provide performance superior "
        "to drop-tail at all loads.",
        location="section 5.1, Figures 9, 11 and 13",
        paper=None,
        tests={
            f"{a} {load}%": Test(faster(a, "drop-tail", load), above(0))
            for load in LOADS
            for a in ("DCN", "PI/ECN")
        },
        justification="The best AQMs are the two the paper names best at 98% and 105% (DCN, "
        "PI/ECN); an ordering of restricted means, the paper gives no size.",
        figure="fig9-all-90",
    ),
    ClaimSpec(
        id="pi-ecn-vs-differential",
        statement="PI/ECN performs comparably to or better than AFD and RIO-PS (with or without "
        "ECN) at every load",
        quote="PI with ECN's uniform treatment of flows provides comparable or better performance "
        "for flows than AFD's and RIO-PS's differential treatment.",
        location="section 5.1, Figures 9, 11 and 13",
        paper=None,
        tests={
            f"{b} {load}%": Test(cdf_excess(b, "PI/ECN", load), below(CLOSE))
            for load in LOADS
            for b in ("AFD", "AFD/ECN", "RIO-PS", "RIO-PS/ECN")
        },
        justification=f"'Comparable or better': the other scheme's CDF rises above PI/ECN's by "
        f"less than {CLOSE} (CLOSE) anywhere up to 2 s.",
        figure="fig11-all-98",
    ),
    ClaimSpec(
        id="differential-order",
        statement="Among the differential schemes DCN beats RIO-PS, which beats AFD (the best "
        "version of each)",
        quote="Comparing just the differential AQM designs, DCN obtains better performance than "
        "RIO-PS which in turn provides better performance than AFD.",
        location="section 5.1, Figures 9, 11 and 13",
        paper=None,
        tests={
            **{
                f"DCN < RIO-PS {load}%": Test(
                    faster("DCN", ("RIO-PS", "RIO-PS/ECN"), load), above(0)
                )
                for load in LOADS
            },
            **{
                f"RIO-PS < AFD {load}%": Test(
                    faster(("RIO-PS", "RIO-PS/ECN"), ("AFD", "AFD/ECN"), load), above(0)
                )
                for load in LOADS
            },
        },
        justification="Orderings of the restricted mean response time, each scheme in its better "
        "version per seed (the figures compare 'the best performing version of each AQM "
        "design'), at each load of the figures.",
        figure="fig11-all-98",
    ),
    # ---------------------------------------------------------------- Figures 6-8
    ClaimSpec(
        id="pi-needs-ecn",
        statement="Above 90% load PI without ECN degrades (far from the uncongested network) while "
        "PI with ECN stays comparable to it, and is faster than PI without ECN",
        quote="Without ECN, the response-time performance obtained with PI degrades rapidly with "
        "loads above 90%. However, with ECN, even at loads of 98% and 105% performance is only "
        "modestly worse than it is at 90% load and is reasonably comparable to the uncongested "
        "case.",
        location="section 5.1, Figure 6",
        paper=None,
        tests={
            **{
                f"PI degraded {load}%": Test(cdf_distance("PI", UNCONGESTED, load), above(CLOSE))
                for load in (98, 105)
            },
            **{
                f"PI/ECN comparable {load}%": Test(
                    cdf_distance("PI/ECN", UNCONGESTED, load), below(CLOSE)
                )
                for load in (98, 105)
            },
            **{
                f"PI/ECN faster {load}%": Test(faster("PI/ECN", "PI", load), above(0))
                for load in (98, 105)
            },
        },
        justification=f"Degraded: CDF further than {CLOSE} from the uncongested one somewhere up "
        f"to 2 s; comparable: within {CLOSE} (CLOSE); plus the ordering of restricted means.",
        figure="fig6-pi",
    ),
    ClaimSpec(
        id="afd-90-no-ecn-gain",
        statement="At 90% load AFD is close to the uncongested network and gains almost nothing "
        "from ECN",
        quote="At 90% load, the performance of AFD is fairly close to that of an uncongested "
        "network and there is almost no performance gain with the addition of ECN.",
        location="section 5.1, Figure 7",
        paper=None,
        tests={
            "AFD close": Test(cdf_distance("AFD", UNCONGESTED, 90), below(CLOSE)),
            "ECN gain": Test(cdf_excess("AFD/ECN", "AFD", 90), below(EQUAL)),
        },
        justification=f"Close: CDF within {CLOSE} (CLOSE); 'almost no gain': AFD/ECN's CDF rises "
        f"above AFD's by less than {EQUAL} (EQUAL) anywhere up to 2 s.",
        figure="fig7-afd",
    ),
    ClaimSpec(
        id="afd-degrades",
        statement="At 98% and 105% load AFD, with or without ECN, is significantly worse than "
        "the uncongested network",
        quote="There is significant degradation in response-time performance as load is "
        "increased to 98% and 105%.",
        location="section 5.1, Figure 7",
        paper=None,
        tests={
            f"{s} {load}%": Test(cdf_distance(s, UNCONGESTED, load), above(CLOSE))
            for load in (98, 105)
            for s in ("AFD", "AFD/ECN")
        },
        justification=f"Significant degradation: a CDF further than {CLOSE} (CLOSE) from the "
        "uncongested one somewhere up to 2 s.",
        figure="fig7-afd",
    ),
    ClaimSpec(
        id="afd-ecn-small-gain",
        statement="At 98% and 105% load ECN improves AFD, but less than it improves PI",
        quote="AFD does show a small yet noticeable improvement with addition of ECN at these "
        "loads.",
        location="section 5.1, Figure 7 (against Figure 6)",
        paper=None,
        tests={
            **{
                f"gain {load}%": Test(faster("AFD/ECN", "AFD", load), above(0))
                for load in (98, 105)
            },
            **{
                f"smaller than PI's {load}%": Test(
                    (faster("PI/ECN", "PI", load) - faster("AFD/ECN", "AFD", load)).named(
                        f"PI's ECN gain minus AFD's (log10 restricted-mean ratios) at {load}%"
                    ),
                    above(0),
                )
                for load in (98, 105)
            },
        },
        justification="'Noticeable': AFD/ECN faster than AFD (restricted means, paired); "
        "'small': a smaller gain than ECN brings PI, which the paper says 'degrades rapidly' "
        "without it. The paper gives no number for either.",
        figure="fig7-afd",
    ),
    ClaimSpec(
        id="rio-ps-ecn-little",
        statement="At every load ECN changes RIO-PS's response times little",
        quote="At all loads, ECN contributes little to the performance of flows under RIO-PS.",
        location="section 5.1, Figure 8",
        paper=None,
        tests={
            f"{load}%": Test(cdf_distance("RIO-PS/ECN", "RIO-PS", load), below(CLOSE))
            for load in LOADS
        },
        justification=f"'Little': the CDFs with and without ECN within {CLOSE} (CLOSE) of each "
        "other at every response time up to 2 s.",
        figure="fig8-rio-ps",
    ),
    # ---------------------------------------------------------------- Table 1
    ClaimSpec(
        id="table1-loss",
        statement="Table 1's loss rates, per scheme and load",
        quote="Table 1: Loss, completed requests, and link utilizations for experiments with the "
        "HTTP workload.",
        location="Table 1 (loss ratio, %)",
        paper=_t1_paper(0),
        tests=_table1_tests(0, lambda s, load, p: Test(m("loss_down_pct", s, load), _loss_band(p))),
        justification=f"Each loss rate (drops over arrivals at the forward bottleneck, %) within "
        f"a factor {LOSS_FACTOR} of the paper's (LOSS_FACTOR).",
    ),
    ClaimSpec(
        id="table1-completed",
        statement="Table 1's completed requests, relative to the uncongested network at the same "
        "load",
        quote="Table 1: Loss, completed requests, and link utilizations for experiments with the "
        "HTTP workload.",
        location="Table 1 (completed requests, millions)",
        paper=_t1_paper_ratio(1),
        tests=_t1_relative(1, "completed"),
        justification="The count of completed exchanges of a scheme over that of the uncongested "
        "network offered the same traffic (same seed), as log10, within 3% of the paper's ratio "
        "(TABLE_BAND). The ratio, not the count: ecnlab's PackMime (ns-2's tables) makes fewer, "
        "larger responses than the paper's generator (docs/reproduction/dcn.md), so absolute "
        "counts differ by the workload alone; they are in the table.",
    ),
    ClaimSpec(
        id="table1-utilization",
        statement="Table 1's link utilization, relative to the uncongested network at the same "
        "load",
        quote="Table 1: Loss, completed requests, and link utilizations for experiments with the "
        "HTTP workload.",
        location="Table 1 (link utilization/throughput, Mb/s)",
        paper=_t1_paper_ratio(2),
        tests=_t1_relative(2, "delivered_down_mbps"),
        justification="The forward bottleneck's delivered wire load over the uncongested "
        "network's (same seed), as log10, within 3% of the paper's ratio (TABLE_BAND).",
    ),
    ClaimSpec(
        id="loss-growth",
        statement="From 90% to 105% load the loss rate of AFD and RIO-PS (with or without ECN) "
        "grows more than DCN's, whose loss stays fairly low",
        quote="We also see in Table 1 that as the load increases, the loss rate increases "
        "significantly for AFD and RIO-PS, even with the use of ECN. With DCN's scheme for "
        "detecting and controlling high-bandwidth flows, a fairly low loss rate is maintained "
        "even at very high loads.",
        location="section 5.1, Table 1",
        paper={
            "growth 90->105 (points)": {
                "DCN": 2.05,
                "AFD": 8.4,
                "AFD/ECN": 8.7,
                "RIO-PS": 6.1,
                "RIO-PS/ECN": 6.6,
            }
        },
        tests={
            s: Test(
                (loss_growth(s) - loss_growth("DCN")).named(
                    f"loss growth of {s} minus DCN's (points)"
                ),
                above(0),
            )
            for s in ("AFD", "AFD/ECN", "RIO-PS", "RIO-PS/ECN")
        },
        justification="Paired differences of the growth in loss rate (percentage points) from "
        "90% to 105%; the paper's numbers are in Table 1 (and tested there).",
    ),
    # ---------------------------------------------------------------- Figures 10-18
    ClaimSpec(
        id="bytes-from-short",
        statement="Under DCN a larger share of the completed bytes comes from responses up to "
        "100 kB and up to 1 MB than under any other scheme, at every load",
        quote="This effect is seen in Figures 10, 12, and 14 where the curve for DCN is always "
        "above the others for response sizes greater than approximately 50,000 bytes.",
        location="section 5.1, Figures 10, 12 and 14",
        paper=None,
        tests={
            f"<= {label} {load}%": Test(
                (
                    m(col, "DCN", load)
                    - combine(
                        [m(col, s, load) for s in HTTP_SCHEMES if s != "DCN"],
                        max,
                        f"highest other {col} at {load}%",
                    )
                ).named(
                    f"share of completed bytes in responses <= {label}: DCN minus the highest other, {load}%"
                ),
                above(0),
            )
            for load in LOADS
            for col, label in (("done_le_1e5", "100 kB"), ("done_le_1e6", "1 MB"))
        },
        justification="The byte-share curves of Figs. 10-14 at two sizes beyond 50 kB, DCN's "
        "against the highest of the seven others per seed. Bytes of completed responses (the "
        "paper's argument is about which responses complete); unfinished exchanges are counted "
        "in the response-time table.",
        figure="fig10-bytes-90",
    ),
    ClaimSpec(
        id="small-responses-dcn-best",
        statement="For responses up to 100 kB DCN has lower response times than every other "
        "scheme at 90% and 98% load",
        quote="In Figures 15 and 17, we see that DCN clearly favors 'small' flows as expected and "
        "outperforms the other AQM schemes at 90% and 98% load.",
        location="section 5.1, Figures 15 and 17",
        paper=None,
        tests={
            f"{load}%": Test(
                faster("DCN", [s for s in HTTP_SCHEMES if s != "DCN"], load, "rm2_small_s"),
                above(0),
            )
            for load in (90, 98)
        },
        justification="Ordering of the restricted mean response time (2 s) of the responses up to "
        "100 kB, DCN against the best of the other seven per seed.",
        figure="fig15-small-90",
    ),
    ClaimSpec(
        id="large-responses-dcn-share",
        statement="Of the responses over 100 kB, DCN serves about 75% faster than every other "
        "scheme at 90% load, and about 40% at 98%",
        quote="In Figure 16, we see that DCN outperforms other AQM schemes for approximately 75% "
        "of flows that are larger than 100,000 bytes at 90% load. Similarly, we observe in Figure "
        "18 that about 40% of flows larger than 100,000 bytes experience better performance under "
        "DCN than under other AQM schemes.",
        location="section 5.1, Figures 16 and 18",
        paper={"90%": 0.75, "98%": 0.40},
        tests={
            "90%": Test(dcn_faster_share(90), between(0.75 - SHARE_BAND, 0.75 + SHARE_BAND)),
            "98%": Test(dcn_faster_share(98), between(0.40 - SHARE_BAND, 0.40 + SHARE_BAND)),
        },
        justification="The share of the Kaplan-Meier quantiles (1-99%) of the > 100 kB response "
        "times at which DCN's is below every other scheme's (the fraction of large flows for "
        "which DCN's CDF is the leftmost), within +/- 0.15 of the paper's reading (SHARE_BAND). "
        "A quantile the estimate does not reach (too many unfinished) counts as infinite.",
        figure="fig16-large-90",
    ),
    # ---------------------------------------------------------------- Table 2 and Figs. 19, 20
    ClaimSpec(
        id="tcp-mix-dcn-rio-best",
        statement="In the general TCP workload DCN and RIO-PS/ECN have lower response times than "
        "drop-tail, PI/ECN and AFD/ECN",
        quote="We again see the benefits of differential AQM approaches, in particular with DCN and "
        "RIO-PS. These two AQM designs outperform drop-tail and other AQM designs",
        location="section 5.2, Figures 19 and 20",
        paper=None,
        tests={
            f"{a} vs {b}": Test(faster(a, b, MIX_LOAD), above(0))
            for a in ("DCN", "RIO-PS/ECN")
            for b in ("drop-tail", "PI/ECN", "AFD/ECN")
        },
        justification="Orderings of the restricted mean response time (2 s), paired by seed; the "
        "paper gives no size.",
        figure="fig19-tcp-mix-cdf",
    ),
    ClaimSpec(
        id="tcp-mix-near-uncongested",
        statement="In the general TCP workload DCN and RIO-PS/ECN come close to the uncongested "
        "network",
        quote="These two AQM designs outperform drop-tail and other AQM designs and come close to "
        "the performance of the uncongested network.",
        location="section 5.2, Figures 19 and 20",
        paper=None,
        tests={
            s: Test(cdf_distance(s, UNCONGESTED, MIX_LOAD), below(CLOSE))
            for s in ("DCN", "RIO-PS/ECN")
        },
        justification=f"Close: CDFs within {CLOSE} (CLOSE) at every response time up to 2 s.",
        figure="fig19-tcp-mix-cdf",
    ),
    ClaimSpec(
        id="table2-loss",
        statement="Table 2's forward and reverse loss rates",
        quote="Table 2: Summary statistics for experiments with general TCP workload",
        location="Table 2 (forward and reverse path loss rate, %)",
        paper={
            f"{s} {d}": PAPER_TABLE2[s][i] for s in MIX_SCHEMES for d, i in (("fwd", 1), ("rev", 2))
        },
        tests={
            f"{s} {d}": Test(m(f"loss_{d2}_pct", s, MIX_LOAD), _loss_band(PAPER_TABLE2[s][i]))
            for s in MIX_SCHEMES
            for d, d2, i in (("fwd", "down", 1), ("rev", "up", 2))
        },
        justification=f"Each loss rate within a factor {LOSS_FACTOR} of the paper's (LOSS_FACTOR).",
    ),
    ClaimSpec(
        id="table2-throughput",
        statement="Table 2's forward and reverse throughput, relative to the uncongested network",
        quote="Table 2: Summary statistics for experiments with general TCP workload",
        location="Table 2 (forward and reverse path link throughput, Mb/s)",
        paper={
            f"{s} {d}": round(PAPER_TABLE2[s][i] / PAPER_TABLE2[UNCONGESTED][i], 4)
            for s in MIX_SCHEMES
            for d, i in (("fwd", 3), ("rev", 4))
        },
        tests={
            **{
                f"{s} fwd": t
                for s, t in _t2_relative(3, "delivered_down_mbps", MIX_SCHEMES).items()
            },
            **{f"{s} rev": t for s, t in _t2_relative(4, "delivered_up_mbps", MIX_SCHEMES).items()},
        },
        justification="Delivered wire load of each direction over the uncongested network's (same "
        "seed), as log10, within 3% of the paper's ratio (TABLE_BAND).",
    ),
    ClaimSpec(
        id="table2-completed",
        statement="Table 2's completed exchanges, relative to the uncongested network",
        quote="Table 2: Summary statistics for experiments with general TCP workload",
        location="Table 2 (completed exchanges, millions)",
        paper={s: round(PAPER_TABLE2[s][0] / PAPER_TABLE2[UNCONGESTED][0], 4) for s in MIX_SCHEMES},
        tests=_t2_relative(0, "completed", MIX_SCHEMES),
        justification="Completed exchanges over the uncongested network's (same seed), as log10, "
        "within 3% of the paper's ratio (TABLE_BAND); the absolute counts depend on the stand-in "
        "mix (the paper's Abilene connection vectors are not available) and are in the table.",
    ),
)


# --------------------------------------------------------------------------- the study


class DcnStudy(Study):
    """Seed 004: DCN against drop-tail, PI, AFD and RIO-PS on HTTP and a general TCP mix."""

    name = "dcn"
    title = "Le, Aikat, Jeffay, Smith: Differential Congestion Notification: Taming the Elephants"
    doc = "docs/reproduction/dcn.md"
    data_dir = DATA
    seeds = SEEDS
    claims = CLAIMS

    def __init__(self) -> None:
        self._cache: dict[tuple[str, str], dict[str, Any]] = {}

    def sweeps(self, mode: str) -> list[dict[str, Any]]:
        return [
            _sweep("http", "http.toml", HTTP_PLAIN, mode, ecn=False, loads=LOADS, reference=True),
            _sweep("http-ecn", "http.toml", HTTP_ECN, mode, ecn=True, loads=LOADS, reference=False),
            _sweep(
                "tcp-mix", "tcp-mix.toml", MIX_PLAIN, mode, ecn=False, loads=None, reference=True
            ),
            _sweep(
                "tcp-mix-ecn", "tcp-mix.toml", MIX_ECN, mode, ecn=True, loads=None, reference=False
            ),
        ]

    def measures(self, results: Results) -> dict[str, pd.DataFrame]:
        """Per part, one row per run: ``seed``, ``load`` (0 for the mix), ``scheme`` (the
        uncongested runs as ``uncongested``), the run summary's loss rates (%), delivered,
        offered and goodput loads (Mb/s, both directions), completed exchanges, tail drops, and
        :func:`run_measures` of its exchanges."""
        return {part: self._part_measures(results, part) for part in results.parts}

    def _part_measures(self, results: Results, part: str) -> pd.DataFrame:
        con = results.open(part)
        http = part.startswith("http")
        load = "load" if http else str(MIX_LOAD)
        runs = con.execute(
            f"""SELECT run_id, seed, {load} AS load,
                   CASE WHEN reference THEN '{UNCONGESTED}' ELSE scheme_label END AS scheme,
                   window_s, 100 * loss_rate_down AS loss_down_pct, 100 * loss_rate_up AS loss_up_pct,
                   delivered_bps_down / 1e6 AS delivered_down_mbps,
                   delivered_bps_up / 1e6 AS delivered_up_mbps,
                   offered_bps_down / 1e6 AS offered_down_mbps, offered_bps_up / 1e6 AS offered_up_mbps,
                   goodput_bps_down / 1e6 AS goodput_down_mbps, goodput_bps_up / 1e6 AS goodput_up_mbps,
                   mean_queue_pkts_down AS mean_queue_down
                FROM runs WHERE status = 'done' ORDER BY run_id"""
        ).df()
        drops = con.execute(
            """SELECT run_id, sum(drops_overflow) FILTER (WHERE link = 'bottleneck_down') AS overflow_down,
                      sum(drops_overflow) FILTER (WHERE link = 'bottleneck_up') AS overflow_up
               FROM links GROUP BY run_id"""
        ).df()
        runs = runs.merge(drops, on="run_id", how="left")
        runs["load"] = runs["load"].astype(int)
        root = results.out / "sweeps" / part / "runs"
        rows = []
        for r in runs.to_dict("records"):
            key = (str(root), r["run_id"])
            if key not in self._cache:
                self._cache[key] = run_measures(_exchanges(root / r["run_id"]), sizes=http)
            rows.append({**r, **self._cache[key]})
        frame = pd.DataFrame(rows)
        if not frame.empty:
            frame["completed_per_90min_m"] = (
                frame["completed"] / frame["window_s"] * PAPER_WINDOW_S / 1e6
            )
        return frame

    def operating_point(
        self, results: Results, frames: Mapping[str, pd.DataFrame]
    ) -> OperatingPoint:
        """The calibrated loads: HTTP 90/98/105 Mb/s (forward), the mix 105.3 forward and 91.2
        reverse; checked on the uncongested runs (``calibrated_load``)."""
        points = []
        for part in ("http", "http-ecn"):
            if part in results.parts:
                points.append(
                    calibrated_load(
                        results,
                        part,
                        ["load_label", "scheme_label"],
                        lambda labels: float(str(labels["load_label"]).rstrip("%")),
                    )
                )
        for part in ("tcp-mix", "tcp-mix-ecn"):
            if part not in results.parts:
                continue
            for direction, target in MIX_TARGET_MBPS.items():
                p = calibrated_load(
                    results, part, ["scheme_label"], lambda labels, t=target: t, direction=direction
                )
                p.rows["configuration"] = p.rows["configuration"] + f" ({direction})"
                points.append(p)
        op = OperatingPoint.combine(points)
        op.note += (
            f" Warm-up {WARMUP_S['http']:g} s (HTTP) and {WARMUP_S['tcp-mix']:g} s (mix), measured "
            f"windows {WINDOW_S[results.mode]['http']:g} s and {WINDOW_S[results.mode]['tcp-mix']:g} s "
            "(docs/reproduction/dcn.md, 'Warm-up')."
        )
        return op

    def analyze(self, results: Results, frames: Mapping[str, pd.DataFrame]) -> Findings:
        f = _findings(frames)
        f.notes.insert(
            0,
            f"Mode {results.mode}: warm-up {WARMUP_S['http']:g} s (HTTP) / "
            f"{WARMUP_S['tcp-mix']:g} s (mix), measured {WINDOW_S[results.mode]['http']:g} s / "
            f"{WINDOW_S[results.mode]['tcp-mix']:g} s per run.",
        )
        return f


def _findings(frames: Mapping[str, pd.DataFrame]) -> Findings:
    """The figures, tables and notes of the study from its per-run measures."""
    f = Findings()
    f.notes.append(
        "Response times are Kaplan-Meier estimates: an exchange unfinished at the end of its run "
        "counts as taking at least its elapsed time. Curves are the mean over seeds of each "
        "run's estimate (every millisecond up to 2 s, or on a log grid); 'rm2' is the mean "
        "response time restricted to 2 s (the area above the CDF up to 2 s)."
    )
    http = _concat(frames, ("http", "http-ecn"))
    mix = _concat(frames, ("tcp-mix", "tcp-mix-ecn"))
    if not http.empty:
        _http_outputs(f, http)
    if not mix.empty:
        _mix_outputs(f, mix)
    return f


def full_simulated_s_per_seed() -> float:
    """Simulated seconds of one seed of the full mode (every configuration once)."""
    total = 0.0
    for d in STUDY.sweeps("full"):
        n = 1
        for axis in d["axes"]:
            n *= len(axis["values"])
        if "reference" in d:
            n += len(LOADS) if d["reference"]["vary"] else 1
        total += n * d["set"]["duration_s"]
    return total


STUDY = DcnStudy()


def _exchanges(run_dir: Path) -> pd.DataFrame:
    """The columns of a stored run's exchanges that the measures need."""
    import json

    import pyarrow.parquet as pq

    from .. import store

    manifest = json.loads((run_dir / store.MANIFEST).read_text(encoding="utf-8"))
    file = run_dir / manifest["tables"]["exchanges"]["file"]
    cols = ["elapsed_s", "completed", "response_bytes"]
    return pq.read_table(file, columns=cols).to_pandas()


def _concat(frames: Mapping[str, pd.DataFrame], parts: Iterable[str]) -> pd.DataFrame:
    have = [frames[p] for p in parts if p in frames and not frames[p].empty]
    return pd.concat(have, ignore_index=True) if have else pd.DataFrame()


# --------------------------------------------------------------------------- tables


def _mean_ci(values: Iterable[float]) -> str:
    xs = [float(v) for v in values if math.isfinite(float(v))]
    if not xs:
        return "-"
    mean, lo, hi = t_interval(xs, CONFIDENCE)
    if len(xs) < 2 or not math.isfinite(lo):
        return f"{mean:.3g}"
    return f"{mean:.3g} [{lo:.3g}, {hi:.3g}]"


def _order(schemes: Iterable[str]) -> list[str]:
    rank = {s: i for i, s in enumerate((UNCONGESTED, *HTTP_SCHEMES))}
    return sorted(set(schemes), key=lambda s: rank.get(s, len(rank)))


def table1(d: pd.DataFrame) -> pd.DataFrame:
    """ecnlab's Table 1 (mean [95% interval] over seeds) beside the seed's, with tail drops."""
    rows = []
    for load in LOADS:
        for s in _order(d["scheme"]):
            g = d[(d["scheme"] == s) & (d["load"] == load)]
            if g.empty:
                continue
            p = PAPER_TABLE1.get((s, load), (math.nan,) * 3)
            rows.append(
                {
                    "load": f"{load}%",
                    "scheme": s,
                    "seeds": len(g),
                    "loss % (paper)": p[0],
                    "loss % (ecnlab)": _mean_ci(g["loss_down_pct"]),
                    "completed M/90 min (paper)": p[1],
                    "completed M/90 min (ecnlab)": _mean_ci(g["completed_per_90min_m"]),
                    "Mb/s (paper)": p[2],
                    "Mb/s (ecnlab)": _mean_ci(g["delivered_down_mbps"]),
                    "tail drops (ecnlab)": int(g["overflow_down"].sum()),
                    "unfinished exchanges (ecnlab)": int(g["unfinished"].sum()),
                }
            )
    return pd.DataFrame(rows).set_index(["load", "scheme"])


def table2(d: pd.DataFrame) -> pd.DataFrame:
    """ecnlab's Table 2 (mean [95% interval] over seeds) beside the seed's."""
    rows = []
    for s in _order(d["scheme"]):
        g = d[d["scheme"] == s]
        p = PAPER_TABLE2.get(s, (math.nan,) * 5)
        rows.append(
            {
                "scheme": s,
                "seeds": len(g),
                "completed M/90 min (paper)": p[0],
                "completed M/90 min (ecnlab)": _mean_ci(g["completed_per_90min_m"]),
                "fwd loss % (paper)": p[1],
                "fwd loss % (ecnlab)": _mean_ci(g["loss_down_pct"]),
                "rev loss % (paper)": p[2],
                "rev loss % (ecnlab)": _mean_ci(g["loss_up_pct"]),
                "fwd Mb/s (paper)": p[3],
                "fwd Mb/s (ecnlab)": _mean_ci(g["delivered_down_mbps"]),
                "rev Mb/s (paper)": p[4],
                "rev Mb/s (ecnlab)": _mean_ci(g["delivered_up_mbps"]),
                "unfinished exchanges (ecnlab)": int(g["unfinished"].sum()),
            }
        )
    return pd.DataFrame(rows).set_index("scheme")


def response_table(d: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: the Kaplan-Meier response-time summary and the unfinished counts."""
    rows = []
    for (load, s), g in d.groupby(["load", "scheme"], sort=False):
        rows.append(
            {
                "load": f"{load}%" if load != MIX_LOAD else "mix",
                "scheme": s,
                "seeds": len(g),
                "rm2 (s)": _mean_ci(g["rm2_s"]),
                "F(0.5 s)": _mean_ci(g["f_0.5"]),
                "F(1 s)": _mean_ci(g["f_1"]),
                "F(2 s)": _mean_ci(g["f_2"]),
                "rm2 <= 100 kB (s)": _mean_ci(g["rm2_small_s"]),
                "exchanges": int(g["exchanges"].sum()),
                "unfinished": int(g["unfinished"].sum()),
                "unfinished > 100 kB": int(g["unfinished_large"].sum()),
            }
        )
    out = pd.DataFrame(rows)
    out["_rank"] = out["scheme"].map(lambda s: _order([s, *HTTP_SCHEMES]).index(s))
    return out.sort_values(["load", "_rank"]).drop(columns="_rank").set_index(["load", "scheme"])


# --------------------------------------------------------------------------- figures

_STYLE = {
    UNCONGESTED: {"color": "black", "linestyle": "--"},
    "drop-tail": {"color": "tab:gray"},
    "PI": {"color": "tab:blue", "linestyle": ":"},
    "PI/ECN": {"color": "tab:blue"},
    "DCN": {"color": "tab:red", "linewidth": 2},
    "AFD": {"color": "tab:green", "linestyle": ":"},
    "AFD/ECN": {"color": "tab:green"},
    "RIO-PS": {"color": "tab:purple", "linestyle": ":"},
    "RIO-PS/ECN": {"color": "tab:purple"},
}
_LOAD_COLOR = {90: "tab:blue", 98: "tab:orange", 105: "tab:red"}


def mean_curve(d: pd.DataFrame, scheme: str, load: int, column: str) -> np.ndarray | None:
    """The mean over seeds of the runs' ``column`` arrays (None without runs).

    A point is the mean of the seeds whose value there is defined; it is NaN where no seed's is
    (a Kaplan-Meier curve past every run's last observation), without numpy's empty-slice warning.
    """
    g = d[(d["scheme"] == scheme) & (d["load"] == load)]
    if g.empty:
        return None
    curves = np.vstack([np.asarray(v, dtype=float) for v in g[column]])
    defined = (~np.isnan(curves)).sum(axis=0)
    total = np.nansum(curves, axis=0)
    return np.where(defined > 0, total / np.maximum(defined, 1), np.nan)


def _cdf_figure(
    d: pd.DataFrame,
    lines: list[tuple[str, int, str, dict[str, Any]]],
    title: str,
    column: str = "cdf",
) -> Figure:
    fig = Figure(figsize=(6, 4.2))
    ax = fig.add_subplot()
    for scheme, load, label, style in lines:
        y = mean_curve(d, scheme, load, column)
        if y is not None:
            ax.step(GRID_S * 1000, y, where="post", label=label, **style)
    ax.set_xlim(0, HORIZON_S * 1000)
    ax.set_ylim(0, 1)
    ax.set_xlabel("response time (ms)")
    ax.set_ylabel("cumulative probability (Kaplan-Meier)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def _log_figure(
    d: pd.DataFrame, load: int, column: str, title: str, *, complementary: bool
) -> Figure:
    fig = Figure(figsize=(6, 4.2))
    ax = fig.add_subplot()
    for s in _order(d["scheme"]):
        y = mean_curve(d, s, load, column)
        if y is None:
            continue
        ax.step(
            LOG_GRID_S * 1000,
            1 - y if complementary else y,
            where="post",
            label=s,
            **_STYLE.get(s, {}),
        )
    ax.set_xscale("log")
    if complementary:
        ax.set_yscale("log")
    ax.set_xlabel("response time (ms)")
    ax.set_ylabel(
        ("complementary " if complementary else "") + "cumulative probability (Kaplan-Meier)"
    )
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left" if complementary else "upper left")
    fig.tight_layout()
    return fig


def _bytes_figure(d: pd.DataFrame, load: int) -> Figure:
    fig = Figure(figsize=(6, 4.2))
    ax = fig.add_subplot()
    for s in _order(d["scheme"]):
        y = mean_curve(d, s, load, "bytes_done")
        if y is not None:
            ax.plot(SIZE_GRID_B, y, label=s, **_STYLE.get(s, {}))
    ax.set_xscale("log")
    ax.set_xlabel("response size (bytes)")
    ax.set_ylabel("share of completed bytes in responses up to this size")
    ax.set_title(f"Bytes by response size, {load}% load")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def _http_outputs(f: Findings, d: pd.DataFrame) -> None:
    per_aqm = {
        "fig5-dcn": ("Figure 5: DCN", ("DCN",)),
        "fig6-pi": ("Figure 6: PI", ("PI", "PI/ECN")),
        "fig7-afd": ("Figure 7: AFD", ("AFD", "AFD/ECN")),
        "fig8-rio-ps": ("Figure 8: RIO-PS", ("RIO-PS", "RIO-PS/ECN")),
    }
    for key, (title, schemes) in per_aqm.items():
        lines = []
        for load in LOADS:
            c = _LOAD_COLOR[load]
            lines.append(
                (
                    UNCONGESTED,
                    load,
                    f"uncongested {load}%",
                    {"color": c, "linestyle": "--", "linewidth": 0.8},
                )
            )
            for s in schemes:
                ls = ":" if len(schemes) > 1 and not s.endswith("/ECN") else "-"
                lines.append((s, load, f"{s} {load}%", {"color": c, "linestyle": ls}))
        f.figure(
            key,
            f"{title} response times for each load",
            _cdf_figure(d, lines, f"{title.split(': ')[1]}: response-time CDF by load"),
        )
    for fig_no, load in ((9, 90), (11, 98), (13, 105)):
        lines = [(s, load, s, _STYLE.get(s, {})) for s in _order(d["scheme"])]
        f.figure(
            f"fig{fig_no}-all-{load}",
            f"Figure {fig_no}: all schemes at {load}% load",
            _cdf_figure(d, lines, f"All schemes, {load}% load"),
        )
    for fig_no, load in ((10, 90), (12, 98), (14, 105)):
        f.figure(
            f"fig{fig_no}-bytes-{load}",
            f"Figure {fig_no}: share of completed bytes by response size, {load}% load",
            _bytes_figure(d, load),
        )
    for fig_no, load in ((15, 90), (17, 98)):
        lines = [(s, load, s, _STYLE.get(s, {})) for s in _order(d["scheme"])]
        f.figure(
            f"fig{fig_no}-small-{load}",
            f"Figure {fig_no}: responses up to 100 kB, {load}% load",
            _cdf_figure(d, lines, f"Responses <= 100 kB, {load}% load", "cdf_small"),
        )
    for fig_no, load in ((16, 90), (18, 98)):
        f.figure(
            f"fig{fig_no}-large-{load}",
            f"Figure {fig_no}: responses over 100 kB, {load}% load",
            _log_figure(
                d, load, "cdf_large_log", f"Responses > 100 kB, {load}% load", complementary=False
            ),
        )
    f.table("table1", "Table 1: loss, completed exchanges, throughput (HTTP)", table1(d))
    f.table(
        "response-times-http",
        "Response times (HTTP): Kaplan-Meier summary and unfinished exchanges",
        response_table(d),
    )


def _mix_outputs(f: Findings, d: pd.DataFrame) -> None:
    lines = [(s, MIX_LOAD, s, _STYLE.get(s, {})) for s in _order(d["scheme"])]
    f.figure(
        "fig19-tcp-mix-cdf",
        "Figure 19: response times, general TCP workload",
        _cdf_figure(d, lines, "General TCP workload: response-time CDF"),
    )
    f.figure(
        "fig20-tcp-mix-ccdf",
        "Figure 20: CCDF of response times, general TCP workload",
        _log_figure(
            d, MIX_LOAD, "cdf_log", "General TCP workload: response-time CCDF", complementary=True
        ),
    )
    f.table("table2", "Table 2: general TCP workload", table2(d))
    f.table(
        "response-times-mix",
        "Response times (general TCP): Kaplan-Meier summary and unfinished exchanges",
        response_table(d),
    )
