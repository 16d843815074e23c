"""Seed 002: Khademi et al., "Alternative Backoff: Achieving Low Latency and High Throughput
with ECN and AQM" (ABE, IFIP Networking 2017; RFC 8511).

``ecnlab reproduce abe [--quick | --full]``; write-up in ``docs/reproduction/abe.md``.

Setup (seed section IV-A): a dumbbell with one bottleneck managed by CoDel (target 5 ms,
interval 100 ms) or PIE as in Linux 3.17 (``variant = "linux_early"``: target 20 ms, tupdate
30 ms, alpha 0.125, beta 1.25, max_burst 100 ms, byte mode off, its drop-above-10% rule
disabled), both with ECN, 1000-packet limit; NewReno (beta 0.5) and CUBIC (beta 0.7, fast
convergence off) senders with ABE, whose beta_ecn is also used at the end of slow start.

Parts (one sweep each):

* ``fig1-buffer``: one NewReno flow through DropTail, 10 Mb/s, 100 ms: utilisation against
  buffer size for several beta, beside the sawtooth model of :mod:`ecnlab.models.buffer_sizing`;
* ``fig2-rtt``: one CUBIC flow (Linux defaults), 20 Mb/s, 90 s, CoDel and PIE, ECN off and on,
  RTT 20-240 ms;
* ``fig3-cwnd``: cwnd against time, NewReno over CoDel, 20 Mb/s, RTT 160 and 240 ms, beta_ecn
  0.5 and 0.9 (``flow_samples``);
* ``fig4-7-newreno`` / ``fig4-7-cubic``: one flow at 10 Mb/s, RTT 100-400 ms, beta_ecn grid:
  throughput gain over beta_ecn = beta and the queueing-delay distribution;
* ``fig8-newreno-20m``: NewReno over CoDel at 20 Mb/s against RTT;
* ``fig9-cubic`` / ``fig10-newreno``: two flows started 30 s apart over a grid of capacities and
  RTTs; the ratio of convergence times (running Jain index reaching 0.95) with and without ABE;
* ``fig11-12-mix``: 10 ECN CUBIC flows with ABE against 10 non-ECN NewReno flows, 10 Mb/s.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import analysis
from ..models import buffer_sizing
from ._study import Findings, Results, SeedPlan, Study, claim, per_seed, summary

__all__ = [
    "STUDY",
    "AbeStudy",
    "convergence_time",
    "gains",
    "grids",
    "group_ratio",
    "quantile_from_hist",
]

MBPS = 1e6
RWND_BYTES = 16 * 1024 * 1024
"""Receiver window large enough never to cap a window (100 Mb/s x 320 ms is 4 MB)."""
SECOND_FLOW_S = 30.0
"""Start of the second flow in the convergence experiments (seed section IV-C)."""
THETA = 0.95
"""Convergence threshold of the running Jain index (seed section IV-C)."""

CODEL = {"kind": "codel", "ecn": True, "target_ms": 5.0, "interval_ms": 100.0}
PIE = {
    "kind": "pie",
    "variant": "linux_early",
    "ecn": True,
    "target_ms": 20.0,
    "tupdate_ms": 30.0,
    "alpha": 0.125,
    "beta": 1.25,
    "max_burst_ms": 100.0,
    "byte_mode": False,
    "drop_above_mark_ecnth": False,
}
AQM_AXIS = {
    "name": "aqm",
    "path": "topology.bottleneck.queue.aqm",
    "values": [CODEL, PIE],
    "labels": ["CoDel", "PIE"],
}
NEWRENO = {"congestion_control": "newreno", "beta": 0.5}
CUBIC = {"congestion_control": "cubic", "beta": 0.7, "cubic_fast_convergence": False}

# The grids of each mode. Quick keeps every point a claim reads and the same run lengths as
# full wherever a run is cheap; it trims the grids and the seeds (docs/reproduction/abe.md).
_GRIDS: dict[str, dict[str, Any]] = {
    "full": {
        "fig1_betas": [0.5, 0.6, 0.7, 0.8, 0.9],
        "fig1_buffers": [round(0.05 * i, 2) for i in range(1, 26)],
        "fig1_seeds": 3,
        "fig2_rtts": [20, 40, 80, 120, 160, 200, 240],
        "one_flow_rtts": [100, 200, 400],
        "newreno_betas": [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95],
        "cubic_betas": [0.7, 0.75, 0.8, 0.85, 0.9, 0.95],
        "fig8_rtts": [20, 40, 80, 160, 240, 320],
        "single_seeds": 10,
        "conv_rates": [1, 5, 10, 20, 40, 100],
        "conv_rtts": [10, 20, 40, 60, 80, 160, 240, 320],
        "conv_cubic_betas": [0.7, 0.8, 0.85, 0.9],
        "conv_newreno_betas": [0.5, 0.6, 0.7, 0.75, 0.8, 0.85],
        "conv_after_s": 270.0,
        "conv_seeds": 3,
        "mix_rtts": [20, 80, 160, 320],
        "mix_betas": [0.7, 0.75, 0.8, 0.85, 0.9],
        "mix_seeds": 3,
    },
    "quick": {
        "fig1_betas": [0.5, 0.7, 0.9],
        "fig1_buffers": [0.1, 0.3, 0.5, 0.75, 1.0],
        "fig1_seeds": 3,
        "fig2_rtts": [20, 80, 160, 240],
        "one_flow_rtts": [100, 400],
        "newreno_betas": [0.5, 0.8, 0.85, 0.95],
        "cubic_betas": [0.7, 0.85, 0.95],
        "fig8_rtts": [40, 160, 320],
        "single_seeds": 3,
        "conv_rates": [5, 40],
        "conv_rtts": [20, 80, 240],
        "conv_cubic_betas": [0.7, 0.85],
        "conv_newreno_betas": [0.5, 0.75, 0.85],
        "conv_after_s": 150.0,
        "conv_seeds": 3,
        "mix_rtts": [20, 80, 320],
        "mix_betas": [0.7, 0.8, 0.85, 0.9],
        "mix_seeds": 3,
    },
}
SINGLE_FLOW_S = 180.0
"""Length of the one-flow runs of Figures 4-8 (the seed does not give it)."""
MIX_S, MIX_WARMUP_S = 330.0, 30.0
"""Figures 11-12: about five minutes after slow start (seed section IV-D)."""


def grids(mode: str) -> dict[str, Any]:
    """The experiment grids of ``mode`` (``quick`` or ``full``)."""
    return dict(_GRIDS[mode])


def _tcp(cc: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """The testbed's end hosts: Linux defaults, and byte counting (RFC 3465) as FreeBSD's
    NewReno and Linux count acknowledged bytes."""
    return {"profile": "linux", "abc": True, **cc, **extra}


def _one_flow(
    rate_bps: float, aqm: dict[str, Any], tcp: dict[str, Any], duration_s: float
) -> dict[str, Any]:
    """One bulk download through the bottleneck; the RTT comes from an ``rtt`` axis."""
    return {
        "name": "abe-one-flow",
        "duration_s": duration_s,
        "topology": {
            "access_rate_bps": 1e9,
            "bottleneck": {
                "rate_bps": rate_bps,
                "delay_ms": 50.0,
                "queue": {"limit_pkts": 1000, "aqm": aqm},
            },
        },
        "tcp": tcp,
        "workloads": [
            {"kind": "bulk", "flows": 1, "start_jitter_s": 1.0, "rwnd_bytes": _const(RWND_BYTES)}
        ],
        "metrics": {"queue_sample_ms": 0, "flow_sample_ms": 1000.0},
    }


def _const(v: float) -> dict[str, Any]:
    return {"dist": "constant", "value": v}


def _rtt_axis(values: Sequence[float]) -> dict[str, Any]:
    return {"name": "rtt", "values": list(values), "labels": [f"{v:g} ms" for v in values]}


def _beta_ecn_axis(values: Sequence[float]) -> dict[str, Any]:
    return {"name": "beta_ecn", "path": "tcp.beta_ecn", "values": list(values)}


_RTT = {"topology.bottleneck.delay_ms": "rtt / 2"}


def fig1_bdp_pkts() -> float:
    """delta of Figure 1 in 1500-byte packets: 10 Mb/s x (100 ms + one transmission)."""
    return buffer_sizing.bdp_pkts(10e6, 0.1 + 1500 * 8 / 10e6)


class AbeStudy(Study):
    """Seed 002 (ABE) as ``ecnlab reproduce abe``."""

    name = "abe"
    title = (
        "Khademi, Armitage, Welzl, Zander, Fairhurst, Ros: Alternative Backoff: Achieving Low "
        "Latency and High Throughput with ECN and AQM (IFIP Networking 2017)"
    )
    doc = "docs/reproduction/abe.md"
    data_dir = Path(__file__).parent / "data" / "abe"

    def sweeps(self, mode: str) -> list[dict[str, Any]]:
        return [{k: v for k, v in d.items() if k != "seeds"} for d in self._parts(mode)]

    def seed_plan(self, mode: str, part: str) -> SeedPlan:
        n = {d["name"]: d["seeds"] for d in self._parts(mode)}[part]
        count = n if isinstance(n, int) else len(n)
        return SeedPlan(count, 0, count)

    def _parts(self, mode: str) -> list[dict[str, Any]]:
        g = grids(mode)
        parts = [self._fig1(g), self._fig2(g), self._fig3()]
        for cc, betas, name in (
            (NEWRENO, g["newreno_betas"], "fig4-7-newreno"),
            (CUBIC, g["cubic_betas"], "fig4-7-cubic"),
        ):
            parts.append(
                {
                    "name": name,
                    "base": _one_flow(10e6, CODEL, _tcp(cc, ecn=True, abe=True), SINGLE_FLOW_S),
                    "seeds": g["single_seeds"],
                    "axes": [AQM_AXIS, _rtt_axis(g["one_flow_rtts"]), _beta_ecn_axis(betas)],
                    "derived": _RTT,
                }
            )
        parts.append(
            {
                "name": "fig8-newreno-20m",
                "base": _one_flow(20e6, CODEL, _tcp(NEWRENO, ecn=True, abe=True), SINGLE_FLOW_S),
                "seeds": g["single_seeds"],
                "axes": [_rtt_axis(g["fig8_rtts"]), _beta_ecn_axis(g["newreno_betas"])],
                "derived": _RTT,
            }
        )
        parts.append(self._convergence("fig9-cubic", CUBIC, g["conv_cubic_betas"], g))
        parts.append(self._convergence("fig10-newreno", NEWRENO, g["conv_newreno_betas"], g))
        parts.append(self._mix(g))
        return parts

    @staticmethod
    def _fig1(g: dict[str, Any]) -> dict[str, Any]:
        bdp = fig1_bdp_pkts()
        base = {
            "name": "abe-fig1",
            "duration_s": 300.0,
            "warmup_s": 60.0,
            "topology": {
                "access_rate_bps": 1e9,
                "bottleneck": {
                    "rate_bps": 10e6,
                    "delay_ms": 50.0,
                    "queue": {"limit_pkts": 100, "aqm": {"kind": "droptail"}},
                },
            },
            "tcp": {"profile": "rfc6298"},
            "workloads": [
                {
                    "kind": "bulk",
                    "flows": 1,
                    "start_jitter_s": 1.0,
                    "rwnd_bytes": _const(RWND_BYTES),
                }
            ],
            "metrics": {"queue_sample_ms": 0},
        }
        return {
            "name": "fig1-buffer",
            "base": base,
            "seeds": g["fig1_seeds"],
            "axes": [
                {"name": "beta", "path": "tcp.beta", "values": g["fig1_betas"]},
                {"name": "buffer", "values": g["fig1_buffers"]},
            ],
            "derived": {
                "topology.bottleneck.queue.limit_pkts": f"max(1, int(round(buffer * {bdp!r})))"
            },
        }

    @staticmethod
    def _fig2(g: dict[str, Any]) -> dict[str, Any]:
        # Linux CUBIC at its defaults (fast convergence on), 90 s (seed section II-B).
        tcp = _tcp({"congestion_control": "cubic"})
        return {
            "name": "fig2-rtt",
            "base": _one_flow(20e6, CODEL, tcp, 90.0),
            "seeds": g["single_seeds"],
            "axes": [
                AQM_AXIS,
                {
                    "name": "ecn",
                    "path": "tcp.ecn",
                    "values": [False, True],
                    "labels": ["no", "yes"],
                },
                _rtt_axis(g["fig2_rtts"]),
            ],
            "derived": _RTT,
        }

    @staticmethod
    def _fig3() -> dict[str, Any]:
        base = _one_flow(20e6, CODEL, _tcp(NEWRENO, ecn=True, abe=True), 60.0)
        base["metrics"]["flow_sample_ms"] = 10.0
        return {
            "name": "fig3-cwnd",
            "base": base,
            "seeds": 3,
            "axes": [_rtt_axis([160, 240]), _beta_ecn_axis([0.5, 0.9])],
            "derived": _RTT,
        }

    @staticmethod
    def _convergence(
        name: str, cc: dict[str, Any], betas: Sequence[float], g: dict[str, Any]
    ) -> dict[str, Any]:
        flow = {"kind": "bulk", "flows": 1, "start_jitter_s": 1.0, "rwnd_bytes": _const(RWND_BYTES)}
        base = _one_flow(10e6, CODEL, _tcp(cc, ecn=True, abe=True), 60.0)
        base["duration_s"] = SECOND_FLOW_S + g["conv_after_s"]
        base["topology"].update({"clients": 2, "servers": 2})
        base["workloads"] = [flow, {**flow, "start_s": SECOND_FLOW_S, "host_offset": 1}]
        base["metrics"]["flow_sample_ms"] = 100.0
        return {
            "name": name,
            "base": base,
            "seeds": g["conv_seeds"],
            "axes": [
                AQM_AXIS,
                {
                    "name": "rate",
                    "values": g["conv_rates"],
                    "labels": [f"{r} Mb/s" for r in g["conv_rates"]],
                },
                _rtt_axis(g["conv_rtts"]),
                _beta_ecn_axis(betas),
            ],
            "derived": {**_RTT, "topology.bottleneck.rate_bps": "rate * 1000000.0"},
        }

    @staticmethod
    def _mix(g: dict[str, Any]) -> dict[str, Any]:
        flows = {
            "kind": "bulk",
            "flows": 10,
            "start_jitter_s": 1.0,
            "rwnd_bytes": _const(RWND_BYTES),
        }
        base = _one_flow(10e6, CODEL, _tcp(NEWRENO, ecn=False), MIX_S)
        base["warmup_s"] = MIX_WARMUP_S
        base["topology"].update({"clients": 20, "servers": 20})
        base["workloads"] = [
            {**flows, "tcp": {**CUBIC, "ecn": True, "abe": True, "beta_ecn": 0.85}},
            {**flows, "host_offset": 10},
        ]
        base["metrics"]["flow_sample_ms"] = 0.0
        return {
            "name": "fig11-12-mix",
            "base": base,
            "seeds": g["mix_seeds"],
            "axes": [
                AQM_AXIS,
                _rtt_axis(g["mix_rtts"]),
                {"name": "beta_ecn", "path": "workloads.0.tcp.beta_ecn", "values": g["mix_betas"]},
            ],
            "derived": _RTT,
        }

    # ----- analysis -----

    def analyze(self, results: Results, frames: Any = None) -> Findings:
        found = Findings()
        found.notes.append(
            f"Mode {results.mode}. Throughput is payload delivered in order over the run "
            "(goodput) divided by the bottleneck rate; queueing delay is the sojourn time of "
            "every packet in the down bottleneck queue."
        )
        _analyze_fig1(results, found)
        _analyze_fig2(results, found)
        _analyze_fig3(results, found)
        _analyze_single(results, found)
        _analyze_fig8(results, found)
        _analyze_convergence(results, found)
        _analyze_mix(results, found)
        return found


STUDY = AbeStudy()


# ----- pure helpers (tested in tests/test_reproduce_abe.py) -----------------------------------


def gains(frame: pd.DataFrame, value: str, keys: Sequence[str], baseline: float) -> pd.DataFrame:
    """Relative gain of ``value`` over the run with ``beta_ecn == baseline`` of the same seed
    and ``keys``: a row per run with ``gain = value / value_at_baseline - 1``."""
    base = frame[frame["beta_ecn"] == baseline][[*keys, "seed", value]]
    merged = frame.merge(base, on=[*keys, "seed"], suffixes=("", "_base"))
    merged["gain"] = merged[value] / merged[f"{value}_base"] - 1.0
    return merged


def quantile_from_hist(sojourn: pd.DataFrame, q: float) -> float:
    """The ``q`` quantile (ms) of a sojourn histogram: the upper edge of the bin where the
    cumulative fraction first reaches ``q`` (the convention of ``analysis.queueing_delay_cdf``)."""
    curve = analysis.queueing_delay_cdf(sojourn)
    if curve.empty:
        return math.nan
    hit = curve[curve["p"] >= q - 1e-12]
    return float(hit["delay_ms"].iloc[0])


def convergence_time(samples: pd.DataFrame, start_s: float, threshold: float = THETA) -> float:
    """Seed 002's T: time from ``start_s`` until the running Jain index of the flows' bytes
    since ``start_s`` first reaches ``threshold``.

    ``samples`` has columns ``t_s``, ``flow``, ``delivered_bytes`` (the ``flow_samples``
    table). Only times after ``start_s`` at which every flow has a sample count (before the
    new flow's first sample the index would be that of the old flow alone). NaN if the index
    never reaches the threshold.
    """
    n = samples["flow"].nunique()
    present = samples.groupby("t_s")["flow"].transform("nunique") == n
    first_full = samples.loc[present, "t_s"].min()
    if not math.isfinite(first_full):
        return math.nan
    keep = (samples["t_s"] <= start_s) | (samples["t_s"] >= first_full)
    running = analysis.running_jain(samples[keep], start_s=start_s, value="delivered_bytes")
    running = running[(running["t_s"] > start_s) & (running["t_s"] >= first_full)]
    return analysis.convergence_time(running.dropna(), start_s=start_s, threshold=threshold)


def group_ratio(flows: pd.DataFrame, value: str = "goodput_bytes") -> float:
    """Mean ``value`` per flow of workload 0 (ECN, ABE) over that of workload 1 (non-ECN):
    the seed's ratio normalised by the number of flows in each group."""
    means = flows.groupby("workload")[value].mean()
    return float(means.get(0, math.nan) / means.get(1, math.nan))


# ----- per-figure analyses --------------------------------------------------------------------


def _values(d: dict[tuple[Any, ...], list[float]], *key: Any) -> list[float]:
    return d.get(tuple(key), [])


def _mean(xs: Sequence[float]) -> float:
    finite = [x for x in xs if math.isfinite(x)]
    return statistics.fmean(finite) if finite else math.nan


def _throughput_runs(con: Any, rate_expr: str = "bottleneck_rate_bps") -> pd.DataFrame:
    return con.execute(
        f"SELECT *, goodput_bps / {rate_expr} AS throughput FROM runs WHERE status = 'done'"
    ).df()


def _analyze_fig1(results: Results, found: Findings) -> None:
    runs = _throughput_runs(results.open("fig1-buffer"))
    bdp = fig1_bdp_pkts()
    runs["limit_pkts"] = [max(1, round(b * bdp)) for b in runs["buffer"]]
    runs["model"] = [
        buffer_sizing.utilization(p, bdp, b) for p, b in zip(runs["limit_pkts"], runs["beta"])
    ]
    runs["error"] = runs["utilization_down"] - runs["model"]
    table = (
        runs.groupby(["beta", "buffer"])
        .agg(
            limit_pkts=("limit_pkts", "first"),
            sim=("utilization_down", "mean"),
            model=("model", "first"),
        )
        .reset_index()
    )
    found.table(
        "fig1-buffer", "Figure 1: utilisation against buffer (sim mean over seeds, model)", table
    )
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.add_subplot()
    grid = np.linspace(0.0, max(runs["buffer"].max(), 1.0), 101)
    for i, (beta, part) in enumerate(table.groupby("beta")):
        ax.plot(
            grid, [buffer_sizing.utilization(x * bdp, bdp, beta) for x in grid], color=f"C{i}", lw=1
        )
        ax.plot(part["buffer"], part["sim"], "o", color=f"C{i}", label=f"beta {beta:g}")
    ax.set_xlabel("buffer / BDP")
    ax.set_ylabel("utilisation")
    ax.set_title("One NewReno flow, 10 Mb/s, RTT 100 ms (lines: model)")
    ax.legend()
    found.figure("fig1-buffer", "Figure 1: throughput against buffer size for several beta", fig)

    # Points where the model leaves the link idle part of the time (elsewhere both are 1).
    below = runs[runs["model"] < 0.999]
    per = per_seed(below.assign(abs_error=below["error"].abs()), "abs_error", ["seed"])
    medians = [float(np.median(per[(s,)])) for s in sorted(runs["seed"].unique())]
    found.claims.append(
        claim(
            "fig1-model",
            "Simulated utilisation of one NewReno flow follows the buffer-sizing model for "
            "every beta (seed Fig. 1: model and simulation agree)",
            paper="model and ns-2 curves overlap",
            ours=summary(medians),
            criterion="per seed, the median |sim - model| over the (beta, buffer) points where "
            "the model is below 1 (the others are 1 in both) <= 0.03",
            passed=bool(medians) and max(medians) <= 0.03,
        )
    )
    small = runs[runs["buffer"] == min(runs["buffer"])]
    by_beta = per_seed(small, "utilization_down", ["beta"])
    betas = sorted(small["beta"].unique())
    lowest, highest = by_beta[(betas[0],)], by_beta[(betas[-1],)]
    found.claims.append(
        claim(
            "fig1-beta",
            f"With a small buffer ({min(runs['buffer']):g} BDP) a larger beta keeps "
            "utilisation higher (eq. 2)",
            paper="throughput rises with beta at small buffers",
            ours={f"beta {betas[0]:g}": summary(lowest), f"beta {betas[-1]:g}": summary(highest)},
            criterion=f"utilisation with beta {betas[-1]:g} exceeds that with {betas[0]:g} by "
            "at least 0.1 in every seed",
            passed=all(h - lo >= 0.1 for h, lo in zip(highest, lowest)),
        )
    )


def _analyze_fig2(results: Results, found: Findings) -> None:
    runs = _throughput_runs(results.open("fig2-rtt"))
    table = runs.pivot_table(index="rtt", columns=["aqm_label", "ecn_label"], values="throughput")
    table.columns = [f"{a} ECN {e}" for a, e in table.columns]
    found.table(
        "fig2-rtt", "Figure 2: CUBIC throughput / capacity against RTT (mean over seeds)", table
    )
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.add_subplot()
    for col in table.columns:
        ax.plot(table.index, 100 * table[col], "o-" if "yes" in col else "s--", label=col)
    ax.set_xlabel("RTT (ms)")
    ax.set_ylabel("throughput (% of 20 Mb/s)")
    ax.legend()
    found.figure("fig2-rtt", "Figure 2: one CUBIC flow over CoDel and PIE, 20 Mb/s, 90 s", fig)
    by = per_seed(runs, "throughput", ["aqm_label", "ecn_label", "rtt"])
    rtts = sorted(runs["rtt"].unique())
    lo, hi = rtts[0], rtts[-1]
    drops, helps = {}, {}
    ok_drop, ok_help = True, True
    for aqm in ("CoDel", "PIE"):
        for ecn in ("no", "yes"):
            a, b = _values(by, aqm, ecn, lo), _values(by, aqm, ecn, hi)
            loss = [1 - y / x for x, y in zip(a, b)]
            drops[f"{aqm} ECN {ecn}"] = summary(loss)
            ok_drop &= _mean(loss) >= 0.10
        for rtt in rtts:
            d = [y - x for x, y in zip(_values(by, aqm, "no", rtt), _values(by, aqm, "yes", rtt))]
            helps[f"{aqm} {rtt:g} ms"] = summary(d)
            ok_help &= abs(_mean(d)) <= 0.10
    found.claims.append(
        claim(
            "fig2-rtt",
            f"A CUBIC flow's throughput through CoDel and PIE falls as RTT grows from {lo:g} "
            f"to {hi:g} ms",
            paper="throughput falls from near 100% to well below as RTT reaches 240 ms",
            ours=drops,
            criterion=f"relative loss of throughput from {lo:g} to {hi:g} ms >= 10% (mean over "
            "seeds) for each AQM, with and without ECN",
            passed=ok_drop,
        )
    )
    found.claims.append(
        claim(
            "fig2-ecn",
            "ECN alone (beta_ecn = beta) barely helps",
            paper="ECN on its own provides limited assistance",
            ours=helps,
            criterion="|throughput with ECN - without| <= 0.10 of capacity (mean over seeds) "
            "at every RTT and AQM",
            passed=ok_help,
        )
    )


def _analyze_fig3(results: Results, found: Findings) -> None:
    con = results.open("fig3-cwnd")
    samples = con.execute(
        "SELECT seed, rtt, beta_ecn, t_s, cwnd_bytes, ssthresh_bytes, delivered_bytes "
        "FROM flow_samples ORDER BY seed, rtt, beta_ecn, t_s"
    ).df()
    fig = Figure(figsize=(9, 3.5), layout="constrained")
    rows = []
    for i, (rtt, part) in enumerate(samples.groupby("rtt")):
        ax = fig.add_subplot(1, 2, i + 1)
        bdp = 20e6 * rtt / 1000 / 8
        for beta, curve in part[part["seed"] == part["seed"].min()].groupby("beta_ecn"):
            ax.plot(
                curve["t_s"],
                curve["cwnd_bytes"] / 1448,
                "-" if beta == 0.5 else "--",
                label=f"beta_ecn {beta:g}",
            )
        ax.axhline(bdp / 1448, color="grey", lw=0.8, ls=":")
        ax.set_title(f"RTT {rtt:g} ms (dotted: BDP)")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("cwnd (segments)")
        ax.legend()
        for (seed, beta), run in part.groupby(["seed", "beta_ecn"]):
            at30 = run[run["t_s"] <= 30.0]["delivered_bytes"].max()
            exit_ss = run[np.isfinite(run["ssthresh_bytes"])]["ssthresh_bytes"]
            rows.append(
                {
                    "rtt": rtt,
                    "beta_ecn": beta,
                    "seed": seed,
                    "goodput_30s": at30 * 8 / 30 / 20e6,
                    "ssthresh_at_exit_over_bdp": float(exit_ss.iloc[0]) / bdp
                    if len(exit_ss)
                    else math.nan,
                }
            )
    found.figure("fig3-cwnd", "Figure 3: cwnd after slow start, NewReno over CoDel, 20 Mb/s", fig)
    table = pd.DataFrame(rows)
    found.table(
        "fig3-cwnd",
        "Figure 3: goodput over the first 30 s and the window after slow start, per run",
        table.groupby(["rtt", "beta_ecn"])[["goodput_30s", "ssthresh_at_exit_over_bdp"]].mean(),
    )
    by = per_seed(table, "goodput_30s", ["rtt", "beta_ecn"])
    ours, ok = {}, True
    for rtt in sorted(table["rtt"].unique()):
        d = [y - x for x, y in zip(_values(by, rtt, 0.5), _values(by, rtt, 0.9))]
        ours[f"{rtt:g} ms"] = summary(d)
        ok &= bool(d) and min(d) > 0
    found.claims.append(
        claim(
            "fig3-slowstart",
            "Backing off by beta_ecn 0.9 at the end of slow start keeps cwnd near the BDP and "
            "delivers more in the first 30 s than 0.5, at RTT 160 and 240 ms",
            paper="better utilisation and shorter completion with beta_ecn 0.9",
            ours=ours,
            criterion="goodput over the first 30 s higher with 0.9 than 0.5 in every seed, "
            "both RTTs (ours: difference in fraction of capacity)",
            passed=ok,
        )
    )


def _single_runs(results: Results, part: str) -> tuple[pd.DataFrame, Any]:
    con = results.open(part)
    return _throughput_runs(con), con


def _delay_quantiles(con: Any) -> pd.DataFrame:
    """Median and 90th percentile sojourn per run (down bottleneck)."""
    data = con.execute(
        "SELECT run_id, seed, aqm_label, rtt, beta_ecn, bin_end_ms, packets FROM sojourn "
        "WHERE link = 'bottleneck_down'"
    ).df()
    rows = []
    for (rid, seed, aqm, rtt, beta), part in data.groupby(
        ["run_id", "seed", "aqm_label", "rtt", "beta_ecn"]
    ):
        rows.append(
            {
                "seed": seed,
                "aqm_label": aqm,
                "rtt": rtt,
                "beta_ecn": beta,
                "p50_ms": quantile_from_hist(part, 0.5),
                "p90_ms": quantile_from_hist(part, 0.9),
            }
        )
    return pd.DataFrame(rows)


def _gain_figure(g: pd.DataFrame, title: str) -> Figure:
    fig = Figure(figsize=(9, 3.5), layout="constrained")
    for i, aqm in enumerate(("CoDel", "PIE")):
        ax = fig.add_subplot(1, 2, i + 1)
        part = g[g["aqm_label"] == aqm]
        for rtt, curve in part.groupby("rtt"):
            m = curve.groupby("beta_ecn")["gain"].agg(["mean", "std"])
            ax.errorbar(
                m.index,
                100 * m["mean"],
                yerr=100 * m["std"].fillna(0),
                marker="o",
                capsize=3,
                label=f"{rtt:g} ms",
            )
        ax.set_title(aqm)
        ax.set_xlabel("beta_ecn")
        ax.set_ylabel("throughput gain (%)")
        ax.legend(title="RTT")
    fig.suptitle(title)
    return fig


def _delay_figure(con: Any, rtt: float, title: str) -> Figure:
    data = con.execute(
        "SELECT aqm_label, beta_ecn, bin_end_ms, packets FROM sojourn "
        "WHERE link = 'bottleneck_down' AND rtt = ?",
        [rtt],
    ).df()
    fig = Figure(figsize=(9, 3.5), layout="constrained")
    for i, aqm in enumerate(("CoDel", "PIE")):
        ax = fig.add_subplot(1, 2, i + 1)
        for beta, part in data[data["aqm_label"] == aqm].groupby("beta_ecn"):
            curve = analysis.queueing_delay_cdf(part)
            ax.step(curve["delay_ms"], 100 * curve["p"], where="post", label=f"{beta:g}")
        ax.set_xlim(0, 60 if aqm == "PIE" else 25)
        ax.set_title(f"{aqm}, RTT {rtt:g} ms")
        ax.set_xlabel("queueing delay (ms)")
        ax.set_ylabel("CDF (%)")
        ax.legend(title="beta_ecn")
    fig.suptitle(title)
    return fig


def _analyze_single(results: Results, found: Findings) -> None:
    nr, nr_con = _single_runs(results, "fig4-7-newreno")
    cu, cu_con = _single_runs(results, "fig4-7-cubic")
    g_nr = gains(nr, "throughput", ["aqm_label", "rtt"], 0.5)
    g_cu = gains(cu, "throughput", ["aqm_label", "rtt"], 0.7)
    for key, g, label in (
        ("fig4", g_nr, "NewReno, over beta_ecn 0.5"),
        ("fig6", g_cu, "CUBIC, over beta_ecn 0.7"),
    ):
        found.figure(
            key,
            f"{'Figure 4' if key == 'fig4' else 'Figure 6'}: throughput gain, {label}, 10 Mb/s",
            _gain_figure(g, label),
        )
        table = g.pivot_table(index=["aqm_label", "rtt"], columns="beta_ecn", values="gain")
        found.table(key, f"Throughput gain ({label}), mean over seeds", table)
    d_nr, d_cu = _delay_quantiles(nr_con), _delay_quantiles(cu_con)
    rtt_min = min(nr["rtt"])
    found.figure(
        "fig5",
        "Figure 5: queueing delay CDF, one NewReno flow, 10 Mb/s",
        _delay_figure(nr_con, rtt_min, "NewReno"),
    )
    found.figure(
        "fig7",
        "Figure 7: queueing delay CDF, one CUBIC flow, 10 Mb/s",
        _delay_figure(cu_con, rtt_min, "CUBIC"),
    )
    for key, d in (("fig5", d_nr), ("fig7", d_cu)):
        found.table(
            f"{key}-delay",
            f"{'Figure 5' if key == 'fig5' else 'Figure 7'}: median and 90th percentile queueing delay (ms), mean over seeds",
            d.groupby(["aqm_label", "rtt", "beta_ecn"])[["p50_ms", "p90_ms"]].mean(),
        )
    rtt_max = max(nr["rtt"])
    by_nr = per_seed(g_nr, "gain", ["aqm_label", "rtt", "beta_ecn"])
    by_cu = per_seed(g_cu, "gain", ["aqm_label", "rtt", "beta_ecn"])
    paper = {"CoDel": 0.24, "PIE": 0.23}
    for aqm in ("CoDel", "PIE"):
        v = _values(by_nr, aqm, rtt_max, 0.8)
        found.claims.append(
            claim(
                f"fig4-gain-{aqm.lower()}",
                f"At RTT {rtt_max:g} ms a NewReno flow with beta_ecn 0.8 gains about a quarter "
                f"in throughput over beta_ecn 0.5 ({aqm})",
                paper=paper[aqm],
                ours=summary(v),
                criterion="mean gain within +-50% of the paper's (relative): "
                f"[{paper[aqm] * 0.5:.3f}, {paper[aqm] * 1.5:.3f}]",
                passed=paper[aqm] * 0.5 <= _mean(v) <= paper[aqm] * 1.5,
            )
        )
    grow = {}
    ok = True
    for aqm in ("CoDel", "PIE"):
        lo, hi = _values(by_nr, aqm, rtt_min, 0.8), _values(by_nr, aqm, rtt_max, 0.8)
        grow[aqm] = {f"{rtt_min:g} ms": summary(lo), f"{rtt_max:g} ms": summary(hi)}
        ok &= _mean(hi) > _mean(lo)
    found.claims.append(
        claim(
            "fig4-rtt",
            "ABE's gain (NewReno, beta_ecn 0.8) is larger at long RTT",
            paper="gains particularly notable for long-lived flows at larger RTT",
            ours=grow,
            criterion=f"mean gain at {rtt_max:g} ms > at {rtt_min:g} ms, both AQMs",
            passed=ok,
        )
    )
    base = d_nr[d_nr["beta_ecn"] == 0.5].set_index(["aqm_label", "rtt", "seed"])
    at = d_nr[d_nr["beta_ecn"] == 0.85].set_index(["aqm_label", "rtt", "seed"])
    rise = (at[["p50_ms", "p90_ms"]] - base[["p50_ms", "p90_ms"]]).reset_index()
    rise = rise[rise["rtt"] == rtt_min]
    limits = {"CoDel": 3.0, "PIE": 15.0}
    ours, ok = {}, True
    for aqm in ("CoDel", "PIE"):
        r = rise[rise["aqm_label"] == aqm].sort_values("seed")
        ours[f"{aqm} median"] = summary(r["p50_ms"])
        ours[f"{aqm} p90"] = summary(r["p90_ms"])
        ok &= _mean(r["p50_ms"]) <= limits[aqm]
    found.claims.append(
        claim(
            "fig5-delay",
            f"With beta_ecn 0.85 the median queueing delay of a NewReno flow at RTT {rtt_min:g} ms "
            "rises by at most a few ms over beta_ecn 0.5",
            paper="+1 ms median, <2 ms p90 (CoDel); +15 ms / 3 ms (PIE)",
            ours=ours,
            criterion="mean rise of the median <= 3 ms over CoDel and <= 15 ms over PIE "
            "(the paper's figures rounded up)",
            passed=ok,
        )
    )
    ours, ok = {}, True
    for aqm in ("CoDel", "PIE"):
        c, n = _values(by_cu, aqm, rtt_max, 0.85), _values(by_nr, aqm, rtt_max, 0.85)
        ours[aqm] = {"CUBIC 0.85 vs 0.7": summary(c), "NewReno 0.85 vs 0.5": summary(n)}
        ok &= _mean(c) < _mean(n)
    found.claims.append(
        claim(
            "fig6-cubic-less",
            f"CUBIC gains less from ABE than NewReno (RTT {rtt_max:g} ms, beta_ecn 0.85)",
            paper="CUBIC 15% (CoDel), 10% (PIE) at beta_ecn 0.85; NewReno more",
            ours=ours,
            criterion="mean CUBIC gain < mean NewReno gain, both AQMs",
            passed=ok,
        )
    )
    paper_cu = {"CoDel": 0.15, "PIE": 0.10}
    for aqm in ("CoDel", "PIE"):
        v = _values(by_cu, aqm, rtt_max, 0.85)
        found.claims.append(
            claim(
                f"fig6-gain-{aqm.lower()}",
                f"At RTT {rtt_max:g} ms a CUBIC flow with beta_ecn 0.85 gains "
                f"{paper_cu[aqm]:.0%} over beta_ecn 0.7 ({aqm})",
                paper=paper_cu[aqm],
                ours=summary(v),
                criterion="mean gain within +-50% of the paper's (relative): "
                f"[{paper_cu[aqm] * 0.5:.3f}, {paper_cu[aqm] * 1.5:.3f}]",
                passed=paper_cu[aqm] * 0.5 <= _mean(v) <= paper_cu[aqm] * 1.5,
            )
        )


def _analyze_fig8(results: Results, found: Findings) -> None:
    runs, _ = _single_runs(results, "fig8-newreno-20m")
    table = runs.pivot_table(index="beta_ecn", columns="rtt", values="throughput")
    found.table("fig8", "Figure 8: NewReno over CoDel at 20 Mb/s, throughput / capacity", table)
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.add_subplot()
    for rtt in table.columns:
        ax.plot(table.index, 100 * table[rtt], "o-", label=f"{rtt:g} ms")
    ax.set_xlabel("beta_ecn")
    ax.set_ylabel("throughput (% of 20 Mb/s)")
    ax.legend(title="RTT")
    found.figure("fig8", "Figure 8: throughput against beta_ecn, NewReno over CoDel, 20 Mb/s", fig)
    g = gains(runs, "throughput", ["rtt"], 0.5)
    top = max(g["beta_ecn"])
    by = per_seed(g, "gain", ["rtt", "beta_ecn"])
    rtts = sorted(runs["rtt"].unique())
    lo, hi = _values(by, rtts[0], top), _values(by, rtts[-1], top)
    found.claims.append(
        claim(
            "fig8-rtt",
            "At 20 Mb/s over CoDel, a larger beta_ecn recovers more throughput at larger RTT",
            paper="throughput improves with beta_ecn, more so for large RTT",
            ours={f"{rtts[0]:g} ms": summary(lo), f"{rtts[-1]:g} ms": summary(hi)},
            criterion=f"gain of beta_ecn {top:g} over 0.5 larger at {rtts[-1]:g} ms than at "
            f"{rtts[0]:g} ms (means) and positive at {rtts[-1]:g} ms",
            passed=_mean(hi) > _mean(lo) and _mean(hi) > 0,
        )
    )


def convergence_table(con: Any, base_beta: float) -> pd.DataFrame:
    """T per run and rho = T(beta_ecn) / T(base) per (seed, aqm, rate, rtt, beta_ecn > base).

    The second flow starts at ``SECOND_FLOW_S`` plus up to a second of jitter; T counts from
    its actual start. A run whose index never reaches theta gets T = the rest of the run
    (censored, a lower bound) and ``censored = True``.
    """
    samples = con.execute(
        "SELECT run_id, t_s, flow, delivered_bytes FROM flow_samples ORDER BY run_id, t_s, flow"
    ).df()
    # The second flow's start (workload 1, jittered by up to a second).
    starts = con.execute(
        "SELECT run_id, max(start_s) AS t0 FROM flows WHERE workload = 1 GROUP BY run_id"
    ).df()
    t0 = dict(zip(starts["run_id"], starts["t0"]))
    runs = con.execute(
        "SELECT run_id, seed, aqm_label, rate, rtt, beta_ecn, duration_s FROM runs WHERE status = 'done'"
    ).df()
    times = {}
    for rid, part in samples.groupby("run_id"):
        times[rid] = convergence_time(part, t0[rid])
    runs["T"] = runs["run_id"].map(times)
    runs["censored"] = runs["T"].isna()
    runs.loc[runs["censored"], "T"] = runs["duration_s"] - runs["run_id"].map(t0)
    keys = ["seed", "aqm_label", "rate", "rtt"]
    base = runs[runs["beta_ecn"] == base_beta][[*keys, "T", "censored"]]
    out = runs[runs["beta_ecn"] != base_beta].merge(base, on=keys, suffixes=("", "_base"))
    out["rho"] = out["T"] / out["T_base"]
    return out


def _analyze_convergence(results: Results, found: Findings) -> None:
    for part, label, base_beta, fig_no in (
        ("fig9-cubic", "CUBIC", 0.7, 9),
        ("fig10-newreno", "NewReno", 0.5, 10),
    ):
        t = convergence_table(results.open(part), base_beta)
        fig = Figure(figsize=(9, 3.5), layout="constrained")
        for i, aqm in enumerate(("CoDel", "PIE")):
            ax = fig.add_subplot(1, 2, i + 1)
            for beta, curve in t[t["aqm_label"] == aqm].groupby("beta_ecn"):
                c = analysis.cdf(curve["rho"])
                ax.step(c["x"], 100 * c["p"], where="post", label=f"{beta:g}")
            ax.set_xscale("log")
            ax.axvline(1.0, color="grey", lw=0.8, ls=":")
            ax.set_title(f"{aqm}, {label}")
            ax.set_xlabel("rho = T(beta_ecn) / T(beta)")
            ax.set_ylabel("CDF (%)")
            ax.legend(title="beta_ecn")
        found.figure(
            f"fig{fig_no}",
            f"Figure {fig_no}: ratio of convergence times with and without ABE, {label}",
            fig,
        )
        summary_table = t.groupby(["aqm_label", "beta_ecn"]).agg(
            median_rho=("rho", "median"),
            share_faster=("rho", lambda x: float((x < 1).mean())),
            censored=("censored", "sum"),
            censored_base=("censored_base", "sum"),
            experiments=("rho", "size"),
        )
        found.table(
            f"fig{fig_no}", f"Figure {fig_no}: rho per AQM and beta_ecn ({label})", summary_table
        )
        medians = {}
        ok = True
        for (aqm, beta), sub in t.groupby(["aqm_label", "beta_ecn"]):
            per = [float(np.median(s["rho"])) for _, s in sub.groupby("seed")]
            medians[f"{aqm} {beta:g}"] = summary(per)
            ok &= _mean(per) <= 1.5
        found.claims.append(
            claim(
                f"fig{fig_no}-convergence",
                f"{label}: the median ratio of convergence times with and without ABE is near "
                "or below 1",
                paper="in most cases the median rho is close to, or smaller than, 1",
                ours=medians,
                criterion="per (AQM, beta_ecn), the median rho over the (C, RTT) grid, averaged "
                "over seeds, is <= 1.5",
                passed=ok,
            )
        )


def _analyze_mix(results: Results, found: Findings) -> None:
    con = results.open("fig11-12-mix")
    flows = con.execute(
        "SELECT run_id, seed, aqm_label, rtt, beta_ecn, workload, goodput_bytes FROM flows"
    ).df()
    rows = [
        {"seed": seed, "aqm_label": aqm, "rtt": rtt, "beta_ecn": beta, "ratio": group_ratio(part)}
        for (seed, aqm, rtt, beta), part in flows.groupby(["seed", "aqm_label", "rtt", "beta_ecn"])
    ]
    r = pd.DataFrame(rows)
    found.table(
        "fig11-12",
        "Figures 11-12: throughput ratio of 10 ECN CUBIC (ABE) flows to 10 non-ECN NewReno flows",
        r.groupby(["aqm_label", "rtt", "beta_ecn"])["ratio"].agg(["mean", "std", "median"]),
    )
    fig = Figure(figsize=(9, 3.5), layout="constrained")
    for i, aqm in enumerate(("CoDel", "PIE")):
        ax = fig.add_subplot(1, 2, i + 1)
        for rtt, part in r[r["aqm_label"] == aqm].groupby("rtt"):
            m = part.groupby("beta_ecn")["ratio"].agg(["mean", "std", "median"])
            ax.errorbar(m.index, m["mean"], yerr=m["std"].fillna(0), capsize=3, label=f"{rtt:g} ms")
            ax.plot(m.index, m["median"], ".", color="k")
        ax.set_title(f"{aqm} (Figure {11 + i})")
        ax.set_xlabel("beta_ecn of the CUBIC flows")
        ax.set_ylabel("throughput ratio ECN / non-ECN")
        ax.legend(title="RTT")
    found.figure(
        "fig11-12", "Figures 11-12: throughput ratio of ECN CUBIC+ABE to non-ECN NewReno flows", fig
    )
    # Per seed: the mean over RTTs (the seed's "on average").
    avg = r.groupby(["aqm_label", "beta_ecn", "seed"])["ratio"].mean().reset_index()
    by = per_seed(avg, "ratio", ["aqm_label", "beta_ecn"])
    top = max(r["beta_ecn"])
    found.claims.append(
        claim(
            "fig11-12-top",
            f"At beta_ecn {top:g} the ABE-vs-NewReno throughput ratio stays below 2.5 on average",
            paper="limited to a factor of 2.5 at beta_ecn 0.9",
            ours={aqm: summary(_values(by, aqm, top)) for aqm in ("CoDel", "PIE")},
            criterion="mean over RTTs and seeds <= 2.5 for each AQM",
            passed=all(_mean(_values(by, aqm, top)) <= 2.5 for aqm in ("CoDel", "PIE")),
        )
    )
    mid = [b for b in sorted(r["beta_ecn"].unique()) if 0.7 <= b <= 0.85]
    ours = {f"{aqm} {b:g}": summary(_values(by, aqm, b)) for aqm in ("CoDel", "PIE") for b in mid}
    found.claims.append(
        claim(
            "fig11-12-mid",
            "For beta_ecn between 0.7 and 0.85 the average throughput ratio is between 1.25 and 2",
            paper="1.25-2",
            ours=ours,
            criterion="mean over RTTs and seeds in [1.25, 2] for each AQM and beta_ecn in "
            f"{', '.join(f'{b:g}' for b in mid)}",
            passed=all(1.25 <= _mean(v["values"]) <= 2.0 for v in ours.values()),
        )
    )
    cells = r.groupby(["aqm_label", "rtt", "beta_ecn"])["ratio"].agg(["mean", "std"])
    inside, total = 0, 0
    for (aqm, rtt, beta), row in cells.iterrows():
        if beta in (0.7,) or beta > 0.85:
            continue
        ref = cells.loc[(aqm, rtt, 0.7)]
        total += 1
        inside += int(abs(row["mean"] - ref["mean"]) <= ref["std"])
    found.claims.append(
        claim(
            "fig11-12-errorbars",
            "The mean ratios for beta_ecn 0.75-0.85 lie within the error bars of CUBIC's "
            "default 0.7",
            paper="within the error bars (one standard deviation over 3 runs)",
            ours={"cells within": inside, "cells": total},
            criterion="every (AQM, RTT, beta_ecn in 0.75-0.85) mean lies within mean +- sd "
            "of beta_ecn 0.7 at that AQM and RTT",
            passed=total > 0 and inside == total,
        )
    )
