"""Measures computed the same way from either simulator's tables, and their comparison.

Both sides go through :func:`measures`, so a difference in the comparison is a difference in
the runs, never in how a number was computed. The measures are the run summary's
(docs/results.md) as the tables give them, plus a few the validation needs (Jain's index of
the bulk flows, drops by packet kind, response-time quantiles).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Comparison", "Row", "compare", "measures", "relative_difference"]


@dataclass(frozen=True)
class Row:
    measure: str
    ns2: float
    ecnlab: float

    @property
    def difference(self) -> float:
        """(ecnlab - ns-2) / |ns-2| (:func:`relative_difference`)."""
        return relative_difference(self.ns2, self.ecnlab)


@dataclass(frozen=True)
class Comparison:
    rows: list[Row]

    def get(self, measure: str) -> Row:
        for r in self.rows:
            if r.measure == measure:
                return r
        raise KeyError(f"no measure {measure!r}; measures are {', '.join(self.names())}")

    def names(self) -> list[str]:
        return [r.measure for r in self.rows]

    def to_records(self) -> list[dict[str, Any]]:
        return [
            {"measure": r.measure, "ns2": r.ns2, "ecnlab": r.ecnlab, "difference": r.difference}
            for r in self.rows
        ]


def relative_difference(ns2: float, ecnlab: float) -> float:
    """(ecnlab - ns-2) / |ns-2|; 0 when both are 0, NaN when ns-2 alone is 0 or either is NaN."""
    if math.isnan(ns2) or math.isnan(ecnlab):
        return math.nan
    if ns2 == 0:
        return 0.0 if ecnlab == 0 else math.nan
    return (ecnlab - ns2) / abs(ns2)


def _window(scenario: Mapping[str, Any]) -> tuple[float, float]:
    return scenario["warmup_s"], scenario["duration_s"]


def _link_measures(links: pa.Table, out: dict[str, float]) -> None:
    import numpy as np

    frame = links.to_pandas()
    for direction in ("down", "up"):
        rows = frame[frame["link"] == f"bottleneck_{direction}"]
        if rows.empty:
            continue
        width = (rows["t_end_s"] - rows["t_start_s"]).to_numpy()
        arrivals = rows["arrivals_pkts"].sum()
        out[f"utilization_{direction}"] = float(np.average(rows["utilization"], weights=width))
        out[f"mean_queue_pkts_{direction}"] = float(
            np.average(rows["mean_queue_pkts"], weights=width)
        )
        drops = rows["drops"].sum() + rows["random_losses"].sum()
        out[f"loss_rate_{direction}"] = float(drops / arrivals) if arrivals else math.nan
        out[f"mark_rate_{direction}"] = (
            float(rows["marks"].sum() / arrivals) if arrivals else math.nan
        )
        signals = drops + rows["marks"].sum()
        out[f"signal_rate_{direction}"] = float(signals / arrivals) if arrivals else math.nan
        out[f"arrivals_{direction}"] = float(arrivals)
        out[f"drops_{direction}"] = float(rows["drops"].sum())
        out[f"marks_{direction}"] = float(rows["marks"].sum())
        out[f"drops_overflow_{direction}"] = float(rows["drops_overflow"].sum())
    for kind in ("syn", "synack", "ack", "data", "retx"):
        out[f"drops_{kind}"] = float(frame[f"drops_{kind}"].sum())
    for kind in ("synack", "data", "retx"):
        out[f"marks_{kind}"] = float(frame[f"marks_{kind}"].sum())


def jain(values: Any) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2)."""
    import numpy as np

    x = np.asarray(values, dtype=float)
    if len(x) == 0 or not (x**2).sum():
        return math.nan
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


def measures(tables: Mapping[str, pa.Table], scenario: Mapping[str, Any]) -> dict[str, float]:
    """The comparison's measures from one run's tables (NaN where a measure does not apply)."""
    import numpy as np

    from ..analysis import response_time_summary

    warmup, duration = _window(scenario)
    window = duration - warmup
    out: dict[str, float] = {}
    _link_measures(tables["links"], out)

    flows = tables["flows"].to_pandas()
    if not flows["goodput_bytes"].isna().any():
        out["goodput_mbps"] = float(flows["goodput_bytes"].sum() * 8 / window / 1e6)
    bulk = flows[flows["kind"] == "bulk"]
    if len(bulk) >= 2:
        out["jain_bulk"] = jain(bulk["goodput_bytes"])
    if len(bulk):
        out["bulk_goodput_mbps"] = float(bulk["goodput_bytes"].sum() * 8 / window / 1e6)
    sent = flows["bytes_sent"].sum()
    out["retx_share"] = float(flows["retx_bytes"].sum() / sent) if sent else math.nan
    if len(flows):
        out["timeouts_per_flow"] = float(flows["rtos"].mean())
        out["ecn_reductions_per_flow"] = float(flows["ecn_reductions"].mean())

    ex = tables["exchanges"].to_pandas()
    if len(ex):
        done = ex[ex["completed"]]
        out["exchanges_started"] = float(len(ex))
        out["completed_share"] = float(len(done) / len(ex))
        rt = done["response_time_s"].to_numpy()
        if len(rt):
            out["response_time_mean_s"] = float(rt.mean())
            out["response_time_median_s"] = float(np.quantile(rt, 0.5))
            out["response_time_p90_s"] = float(np.quantile(rt, 0.9))
        first = ex[ex["seq_in_flow"] == 0]
        if len(first):
            waited = (first["syn_retx"] > 0) | (first["synack_retx"] > 0)
            out["handshake_retx_share"] = float(waited.mean())
            out["synack_drop_share"] = float((first["synack_drops"] > 0).mean())
            if waited.any():
                out["handshake_wait_mean_s"] = float(first.loc[waited, "handshake_wait_s"].mean())
        out["response_mbps"] = float(done["response_bytes"].sum() * 8 / window / 1e6)
        # Seed 000's measure: the share of responses done within 0.5 s, Kaplan-Meier with an
        # unfinished exchange censored at its elapsed time (as the reproduction reads it).
        summary = response_time_summary(ex, at_s=(0.5,), horizon_s=window).iloc[0]
        out["response_within_0.5s_share"] = float(summary["F_0.5"])

    aqm = tables["aqm_samples"].to_pandas()
    for (link, variable), group in aqm.groupby(["link", "variable"]):
        direction = link.rsplit("_", 1)[1]
        if variable in ("avg", "p", "prob"):
            out[f"aqm_{variable}_mean_{direction}"] = float(group["value"].mean())
        if variable == "max_p":
            out[f"aqm_max_p_last_{direction}"] = float(group["value"].iloc[-1])
    return out


def compare(ns2: Mapping[str, float], ecnlab: Mapping[str, float]) -> Comparison:
    """Side by side, every measure either side has, in ns-2's order then ecnlab's."""
    names = list(ns2) + [k for k in ecnlab if k not in ns2]
    return Comparison(
        [Row(k, float(ns2.get(k, math.nan)), float(ecnlab.get(k, math.nan))) for k in names]
    )
