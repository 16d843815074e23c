"""The L4S coexistence study: Scalable and Classic TCP under the DualQ Coupled AQM.

Sources: De Schepper, Bondarenko, Tsang, Briscoe, "PI2: A Linearized AQM for both Classic and
Scalable TCP", ACM CoNEXT 2016 (PI2 and its coupled form), and the DualQ Coupled AQM
specification (the IETF drafts that became RFC 9332, "Dual-Queue Coupled Active Queue
Management (AQM) for Low Latency, Low Loss, and Scalable Throughput (L4S)"), whose abstract
summarises the evaluations it cites. The write-up is ``docs/reproduction/l4s.md``.

Parts (one sweep each):

* ``coexist``: one Classic flow (CUBIC, no ECN) and one Scalable flow (DCTCP, as the papers
  ran it, or TCP Prague; ECT(1)) share a bottleneck, long-running, equal base RTTs; the AQM is DualPI2 (coupled, k = 2) or
  PIE with ECN (one queue that marks both alike); link rates and RTTs as the PI2 paper's
  testbed grid (4-200 Mb/s, 5-100 ms).
* ``mix``: DualPI2 and PIE with ECN at 40 Mb/s and 20 ms with mixes of Classic and Scalable
  flows (the drafts' "wide range of mixes").
* ``pi2-classic``: five CUBIC flows without ECN through PI2 (single queue, squared output) or
  PIE at 40 Mb/s: the PI2 paper's claim that squaring controls Classic traffic no worse than
  PIE's heuristics.

Measures per run: per-flow goodput of each class (payload delivered in order in the
measurement window, per flow), their ratio; the bottleneck's utilisation; the DualPI2 queues'
delays, which are the queuing time of each queue's head sampled every millisecond (the
``aqm_samples`` variables ``l_delay_ms`` and ``c_delay_ms``: a time average, not a per-packet
sojourn); drops of the Scalable flows over the whole run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from . import verdict as V
from ._study import Findings, Results, SeedPlan, Study

__all__ = ["CLAIMS", "GRIDS", "STUDY", "L4sStudy", "grids"]

GRIDS: dict[str, dict[str, Any]] = {
    "quick": {
        "duration_s": 60.0,
        "warmup_s": 20.0,
        "rates_mbps": [12, 40, 120],
        "rtts_ms": [10, 20, 50, 100],
        "mixes": ["1:1", "1:4", "4:1", "4:4"],
        "pi2_rtts_ms": [20, 50, 100],
    },
    "full": {
        "duration_s": 200.0,
        "warmup_s": 40.0,
        "rates_mbps": [4, 12, 40, 120, 200],
        "rtts_ms": [5, 10, 20, 50, 100],
        "mixes": ["1:1", "1:4", "4:1", "4:4", "1:9", "9:1", "10:10"],
        "pi2_rtts_ms": [5, 10, 20, 50, 100],
    },
}
"""Per mode: the measured window (duration less warm-up, s), the grids. The quick grid is a
subset of the full one."""

MIX_RATE_MBPS = 40
MIX_RTT_MS = 20
PI2_RATE_MBPS = 40
PI2_FLOWS = 5
BUFFER_PKTS = 10_000
"""The bottleneck buffer (packets, both AQMs): Linux sch_dualpi2's default limit. The AQMs,
not the buffer, bound the queues."""

AQMS: dict[str, dict[str, Any]] = {
    "dualpi2": {"kind": "dualpi2"},
    "pie-ecn": {"kind": "pie", "ecn": True},
}
"""The coexistence comparison: the coupled dual queue (RFC 9332 defaults) against one queue
that marks ECN-capable packets of both classes alike (PIE with ECN, the PI2 paper's
baseline)."""

CLASSIC_TCP = {"congestion_control": "cubic", "ecn": False}
SCALABLE: dict[str, dict[str, Any]] = {
    "dctcp": {"congestion_control": "dctcp", "ecn": True, "ect_codepoint": "ect1"},
    "prague": {"congestion_control": "prague", "ecn": True, "ecn_feedback": "accecn"},
}
"""The Scalable controls: DCTCP as the papers ran it (Linux's, unpaced; ECT(1) so that the
classifier puts it in the L queue) and TCP Prague (paced, RTT-independent, over AccECN
feedback as the Prague draft and Linux's tcp_prague require: the L4S team's later control). The claims are decided on DCTCP, the papers' control; Prague is shown beside
it and has a claim of ours."""
SCALABLE_TCP = SCALABLE["dctcp"]

SEEDS: dict[str, SeedPlan] = {"quick": SeedPlan(3, 2, 7), "full": SeedPlan(5, 5, 15)}

BALANCE_LOG2 = 1.0
"""Rate balance: per-flow rates within a factor of 2 of each other (|log2 ratio| < 1)."""
STARVED_LOG2 = -2.0
"""Starvation: a Classic flow gets less than a quarter of a Scalable flow's rate."""


AQM_VARIABLES = (
    "l_delay_ms",
    "c_delay_ms",
    "l_served_pkts",
    "l_sojourn_total_ms",
    "c_served_pkts",
    "c_sojourn_total_ms",
)
"""The ``aqm_samples`` variables the measures read (DualPI2's queue delays and counters; six of
its ten variables, sampled every millisecond on both bottleneck directions)."""


def grids(mode: str) -> dict[str, Any]:
    if mode not in GRIDS:
        raise ValueError(f"mode {mode!r} is not one of {', '.join(GRIDS)}")
    return GRIDS[mode]


def _mix_counts(mix: str) -> tuple[int, int]:
    c, s = mix.split(":")
    return int(c), int(s)


def _base(mode: str, classic: int, scalable: int, rate_mbps: float, rtt_ms: float) -> dict:
    g = grids(mode)
    workloads = [
        {"kind": "bulk", "flows": n, "direction": "down", "start_jitter_s": 1.0, "tcp": tcp}
        for n, tcp in ((classic, CLASSIC_TCP), (scalable, SCALABLE_TCP))
        if n > 0
    ]
    return {
        "name": "l4s",
        "duration_s": g["duration_s"],
        "warmup_s": g["warmup_s"],
        "topology": {
            "clients": classic + scalable,
            "servers": classic + scalable,
            "access_rate_bps": 10e9,
            "access_delay_ms": 0.0,
            "bottleneck": {
                "rate_bps": rate_mbps * 1e6,
                "delay_ms": rtt_ms / 2,
                "queue": {"limit_pkts": BUFFER_PKTS, "aqm": AQMS["dualpi2"]},
            },
        },
        "tcp": {"profile": "linux"},
        "workloads": workloads,
        "metrics": {"queue_sample_ms": 1.0, "aqm_variables": list(AQM_VARIABLES)},
    }


_AQM_AXIS = {
    "name": "aqm",
    "path": "topology.bottleneck.queue.aqm",
    "values": list(AQMS.values()),
    "labels": list(AQMS),
}
_SCALABLE_AXIS = {
    "name": "scalable",
    "path": "workloads.1.tcp",
    "values": list(SCALABLE.values()),
    "labels": list(SCALABLE),
}
_RTT = {"topology.bottleneck.delay_ms": "rtt_ms / 2"}


class L4sStudy(Study):
    name = "l4s"
    title = (
        'De Schepper, Bondarenko, Tsang, Briscoe, "PI2: A Linearized AQM for both Classic and '
        'Scalable TCP", CoNEXT 2016, and the DualQ Coupled AQM evaluations (RFC 9332)'
    )
    doc = "docs/reproduction/l4s.md"
    data_dir = Path(__file__).parent
    seeds = SEEDS

    def sweeps(self, mode: str) -> list[dict[str, Any]]:
        g = grids(mode)
        coexist = {
            "name": "coexist",
            "base": _base(mode, 1, 1, 40, 20),
            "axes": [
                _AQM_AXIS,
                _SCALABLE_AXIS,
                {
                    "name": "rate_mbps",
                    "path": "topology.bottleneck.rate_bps",
                    "values": [r * 1e6 for r in g["rates_mbps"]],
                    "labels": [str(r) for r in g["rates_mbps"]],
                },
                {"name": "rtt_ms", "values": g["rtts_ms"]},
            ],
            "derived": _RTT,
        }
        mix_counts = [_mix_counts(m) for m in g["mixes"]]
        mix = {
            "name": "mix",
            "base": _base(mode, 1, 1, MIX_RATE_MBPS, MIX_RTT_MS),
            "axes": [
                _AQM_AXIS,
                {
                    "name": "mix",
                    "path": "workloads",
                    "labels": g["mixes"],
                    "values": [_base(mode, c, s, 1, 1)["workloads"] for c, s in mix_counts],
                },
                _SCALABLE_AXIS,
            ],
            "derived": {
                "topology.clients": "workloads[0].flows + workloads[1].flows",
                "topology.servers": "workloads[0].flows + workloads[1].flows",
            },
        }
        pi2 = _base(mode, PI2_FLOWS, 0, PI2_RATE_MBPS, 20)
        pi2_classic = {
            "name": "pi2-classic",
            "base": pi2,
            "axes": [
                {
                    "name": "aqm",
                    "path": "topology.bottleneck.queue.aqm",
                    "values": [{"kind": "pi2"}, {"kind": "pie"}],
                    "labels": ["pi2", "pie"],
                },
                {"name": "rtt_ms", "values": g["pi2_rtts_ms"]},
            ],
            "derived": _RTT,
        }
        return [coexist, mix, pi2_classic]

    def measures(self, results: Results) -> dict[str, pd.DataFrame]:
        out = {}
        for part in results.parts:
            con = results.open(part)
            out[part] = run_measures(con, results.seeds.get(part, 10**9))
        return out

    def analyze(self, results: Results, frames: Mapping[str, pd.DataFrame]) -> Findings:
        found = Findings()
        found.notes.append(
            f"Mode {results.mode}. Rates are per-flow goodput (payload delivered in order in "
            "the measurement window); the ratio is Classic (CUBIC, no ECN) over Scalable "
            "(DCTCP or Prague, ECT(1)). L and C delays are the queuing time of each DualPI2 queue's "
            "head sampled every millisecond (a time average, not a per-packet sojourn)."
        )
        _analyze_coexist(frames["coexist"], found)
        _analyze_mix(frames["mix"], found)
        _analyze_pi2(frames["pi2-classic"], found)
        return found


# ----- per-run measures -------------------------------------------------------------------------


def _sojourn(queue: str) -> str:
    """SQL: the mean per-packet queuing time (ms) of DualPI2's ``queue`` ("l" or "c") over the
    window, from its cumulative totals (sampled from the end of the warm-up)."""

    def span(var: str) -> str:
        return (
            f"(max(value) FILTER (WHERE variable = '{queue}_{var}') "
            f"- min(value) FILTER (WHERE variable = '{queue}_{var}'))"
        )

    return f"{span('sojourn_total_ms')} / nullif({span('served_pkts')}, 0)"


def run_measures(con: duckdb.DuckDBPyConnection, n: int) -> pd.DataFrame:
    """One row per run of seeds 1..n: the run's labels, per-flow goodput of each class (Mb/s),
    their ratio and its log2, utilisation of the down bottleneck, the DualPI2 queues' delays
    (ms; NaN for single-queue AQMs: the mean per-packet queuing time of each queue,
    ``l_sojourn_ms`` and ``c_sojourn_ms``, and the mean and 99th percentile of the head's
    queuing time sampled every millisecond), the mean and standard deviation of the down queue's sampled length
    in milliseconds of transmission, and the Scalable flows' drops over the whole run.

    A run that did not finish keeps its row with NaN measures, so the claims that read it
    report its seed as not finite instead of leaving it out."""
    runs = con.execute("SELECT * FROM runs WHERE seed BETWEEN 1 AND ?", [n]).df()
    per_flow = con.execute(
        """
        SELECT f.run_id, f.workload,
               sum(f.goodput_bytes) * 8 / r.window_s / 1e6 / count(*) AS mbps,
               sum(f.drops) AS drops
        FROM flows f JOIN runs r USING (run_id)
        GROUP BY f.run_id, f.workload, r.window_s
        """
    ).df()
    delays = con.execute(
        f"""
        SELECT run_id,
               avg(value) FILTER (WHERE variable = 'l_delay_ms') AS l_delay_ms,
               quantile_cont(value, 0.99) FILTER (WHERE variable = 'l_delay_ms') AS l_delay_p99_ms,
               avg(value) FILTER (WHERE variable = 'c_delay_ms') AS c_delay_ms,
               {_sojourn("l")} AS l_sojourn_ms,
               {_sojourn("c")} AS c_sojourn_ms
        FROM aqm_samples WHERE link = 'bottleneck_down' GROUP BY run_id
        """
    ).df()
    queue = con.execute(
        """
        SELECT q.run_id,
               avg(q.queue_bytes * 8 / r.rate_bps * 1e3) AS queue_ms,
               stddev_samp(q.queue_bytes * 8 / r.rate_bps * 1e3) AS queue_sd_ms
        FROM queue_samples q
        JOIN (SELECT run_id, delivered_bps_down / utilization_down AS rate_bps FROM runs
              WHERE utilization_down > 0) r USING (run_id)
        WHERE q.link = 'bottleneck_down' GROUP BY q.run_id
        """
    ).df()
    frame = runs.copy()
    for col in ("aqm", "mix", "scalable"):  # axes of tables are read by their labels
        if f"{col}_label" in frame.columns:
            frame[col] = frame[f"{col}_label"]
    if "rate_mbps" in frame.columns:
        frame["rate_mbps"] = frame["rate_mbps"] / 1e6  # the axis sets the rate in b/s
    for w, name in ((0, "classic"), (1, "scalable")):
        part = per_flow[per_flow["workload"] == w].set_index("run_id")
        frame[f"{name}_mbps"] = frame["run_id"].map(part["mbps"])
        frame[f"{name}_drops"] = frame["run_id"].map(part["drops"])
    frame["ratio"] = frame["classic_mbps"] / frame["scalable_mbps"]
    frame["log2_ratio"] = np.log2(frame["ratio"].where(frame["ratio"] > 0))
    frame["utilization"] = frame["utilization_down"]
    for col in ("l_delay_ms", "l_delay_p99_ms", "c_delay_ms", "l_sojourn_ms", "c_sojourn_ms"):
        frame[col] = frame["run_id"].map(delays.set_index("run_id")[col])
    for col in ("queue_ms", "queue_sd_ms"):
        frame[col] = frame["run_id"].map(queue.set_index("run_id")[col])
    return frame


# ----- claims -----------------------------------------------------------------------------------


def _m(part: str, column: str, **where: Any) -> V.Quantity:
    return V.measure(part, column, **where)


def _grid_tests(
    mode_grid: dict[str, Any],
    column: str,
    region: V.Region,
    aqm: str,
    text: str,
    scalable: str = "dctcp",
) -> dict[str, V.Test]:
    return {
        f"{rate} Mb/s {rtt} ms": V.Test(
            _m("coexist", column, aqm=aqm, scalable=scalable, rate_mbps=rate, rtt_ms=rtt).named(
                f"{text} [{aqm}, {scalable}, {rate} Mb/s, {rtt} ms]"
            ),
            region,
        )
        for rate in mode_grid["rates_mbps"]
        for rtt in mode_grid["rtts_ms"]
    }


def _mix_tests(mixes: list[str], column: str, region: V.Region, text: str) -> dict[str, V.Test]:
    """One test per mix of the ``mix`` part, DualPI2 with DCTCP (every mix has both classes)."""
    return {
        f"mix {mix}": V.Test(
            _m("mix", column, aqm="dualpi2", scalable="dctcp", mix=mix).named(
                f"{text} [dualpi2, dctcp, mix {mix}]"
            ),
            region,
        )
        for mix in mixes
    }


_MOVED_TO_DCTCP = (
    "Decided on DCTCP, the papers' Scalable control; the first version of this study decided it "
    "on TCP Prague, and was changed after its first quick run, when we noticed that the PI2 "
    "paper and the drafts quoted ran DCTCP. The criterion itself was not changed; Prague keeps "
    "a claim of ours (prague-rate-balance)."
)

_PER_PACKET = (
    "Its measure was first the L (C) queue head's queuing time sampled every millisecond, "
    "averaged over time; after the first quick runs DualPI2 was given per-queue totals of the "
    "packets sent and their queuing times, and the claim moved to the mean per-packet delay, "
    "the paper's measure. The region did not change."
)

_COUPLED_QUOTE = (
    "The Coupled AQM ensures that a flow runs at about the same rate whether it uses DCTCP or "
    "TCP Reno/Cubic, but without inspecting transport layer flow identifiers."
)
_COUPLED_WHERE = (
    "DualQ Coupled AQM draft (draft-ietf-tsvwg-aqm-dualq-coupled-01 to -07), abstract; RFC 9332 "
    "section 2.1 (k = 2); PI2 paper section 4 and its coexistence experiments"
)


def claims_for(mode: str) -> tuple[V.ClaimSpec, ...]:
    """The claims, fixed before the runs, on the points of ``mode``'s grid."""
    g = grids(mode)
    mixes = g["mixes"]
    return (
        V.ClaimSpec(
            id="coupled-rate-balance",
            statement="Under DualPI2 (k = 2) a Classic CUBIC flow and a Scalable DCTCP flow of "
            "equal base RTT get about the same rate, at every link rate and RTT",
            quote=_COUPLED_QUOTE,
            location=_COUPLED_WHERE,
            paper="about the same rate (ratio near 1)",
            tests=_grid_tests(
                g,
                "log2_ratio",
                V.near(0.0, BALANCE_LOG2),
                "dualpi2",
                "log2(Classic / Scalable per-flow goodput)",
            ),
            justification="'About the same rate' as a factor of 2 either way: |log2 ratio| < 1. "
            "The coupling equalises windows, not rates (RFC 9332 2.1): the Classic flow's RTT "
            "includes the C queue's 15 ms target and the Scalable flow's does not, so the "
            "rates may differ by the ratio of RTTs; a factor of 2 covers that at RTTs of 15 ms "
            "and more.",
            figure="coexist-ratio",
            changed=_MOVED_TO_DCTCP,
        ),
        V.ClaimSpec(
            id="single-queue-starvation",
            statement="In one ECN queue that marks both alike (PIE with ECN) the Classic flow "
            "is starved by the Scalable flow",
            quote="DCTCP is so aggressive that existing TCP algorithms approach starvation.",
            location="DualQ Coupled AQM draft (-01 to -07), abstract; PI2 paper section 2 "
            "(the coexistence problem)",
            paper="approach starvation",
            tests=_grid_tests(
                g,
                "log2_ratio",
                V.below(STARVED_LOG2),
                "pie-ecn",
                "log2(Classic / Scalable per-flow goodput)",
            ),
            justification="Starvation as less than a quarter of the Scalable flow's rate (log2 "
            "ratio below -2). At equal marking probability p, DCTCP-like windows go as 2/p and "
            "Reno's as 1.22/sqrt(p) (RFC 9332 2.1): at p = 1% that is 200 against 12 packets.",
            figure="coexist-ratio",
            changed=_MOVED_TO_DCTCP,
        ),
        V.ClaimSpec(
            id="coupling-gain",
            statement="The coupling at least doubles the Classic flow's rate relative to the "
            "Scalable flow's, against one ECN queue, at every link rate and RTT",
            quote="With suitable packet classification, it becomes simple to extend this PI2 "
            "AQM to support coexistence between Classic and Scalable congestion controls",
            location="PI2 paper, abstract",
            paper="coexistence instead of starvation",
            tests={
                f"{rate} Mb/s {rtt} ms": V.Test(
                    (
                        _m(
                            "coexist",
                            "log2_ratio",
                            aqm="dualpi2",
                            scalable="dctcp",
                            rate_mbps=rate,
                            rtt_ms=rtt,
                        )
                        - _m(
                            "coexist",
                            "log2_ratio",
                            aqm="pie-ecn",
                            scalable="dctcp",
                            rate_mbps=rate,
                            rtt_ms=rtt,
                        )
                    ).named(
                        f"log2 ratio under DualPI2 minus under PIE-ECN [{rate} Mb/s, {rtt} ms]"
                    ),
                    V.above(1.0),
                )
                for rate in g["rates_mbps"]
                for rtt in g["rtts_ms"]
            },
            justification="Paired by seed (same traffic under both AQMs): the difference of log2 "
            "ratios is the factor the coupling gains for the Classic flow; above 1 means more "
            "than doubled.",
            origin="ours",
            figure="coexist-ratio",
            changed=_MOVED_TO_DCTCP,
        ),
        V.ClaimSpec(
            id="l-delay-sub-ms",
            statement="Under DualPI2 the L queue's average queuing delay is below 1 ms",
            quote="DCTCP achieved sub-millisecond average queuing delay and zero congestion loss "
            "under a wide range of mixes of DCTCP and 'Classic' broadband Internet traffic",
            location="DualQ Coupled AQM draft (-01 to -07), abstract",
            paper="< 1 ms average",
            tests=_grid_tests(
                g, "l_sojourn_ms", V.below(1.0), "dualpi2", "mean per-packet L-queue delay (ms)"
            ),
            justification="The paper's number, on the mean queuing time of the packets the L "
            "queue sent in the window.",
            figure="coexist-delay",
            changed=_MOVED_TO_DCTCP + " " + _PER_PACKET,
        ),
        V.ClaimSpec(
            id="l-zero-loss",
            statement="Under DualPI2 the Scalable flows lose no packets",
            quote="zero congestion loss",
            location="DualQ Coupled AQM draft (-01 to -07), abstract",
            paper="0 drops",
            tests={
                **_grid_tests(
                    g,
                    "scalable_drops",
                    V.below(0.5),
                    "dualpi2",
                    "drops of the Scalable flow (whole run)",
                ),
                **_mix_tests(
                    mixes, "scalable_drops", V.below(0.5), "drops of the Scalable flows (whole run)"
                ),
            },
            justification="Zero is a count: below 0.5 per run on average. Whole run, slow "
            "start included (the Scalable start-up is ECN-marked, not dropped, unless the buffer "
            "overflows).",
            figure="coexist-delay",
            changed=_MOVED_TO_DCTCP,
        ),
        V.ClaimSpec(
            id="mix-rate-balance",
            statement="Under DualPI2 Classic and Scalable flows get about the same per-flow rate "
            "whatever the mix of flows",
            quote=_COUPLED_QUOTE + " ... under a wide range of mixes of DCTCP and 'Classic' "
            "broadband Internet traffic",
            location=_COUPLED_WHERE,
            paper="about the same rate (ratio near 1)",
            tests=_mix_tests(
                mixes,
                "log2_ratio",
                V.near(0.0, BALANCE_LOG2),
                "log2(Classic / Scalable per-flow goodput)",
            ),
            justification="As coupled-rate-balance, at 40 Mb/s and 20 ms, per mix "
            "'Classic:Scalable' flows.",
            figure="mix",
            changed=_MOVED_TO_DCTCP,
        ),
        V.ClaimSpec(
            id="prague-rate-balance",
            statement="Under DualPI2 a Classic CUBIC flow and a TCP Prague flow of equal base "
            "RTT get about the same rate, at every link rate and RTT",
            quote=_COUPLED_QUOTE,
            location=_COUPLED_WHERE + "; Prague: RFC 9331 section 4 (Prague requirements)",
            paper="about the same rate (stated for DCTCP; Prague came later)",
            tests=_grid_tests(
                g,
                "log2_ratio",
                V.near(0.0, BALANCE_LOG2),
                "dualpi2",
                "log2(Classic / Scalable per-flow goodput)",
                scalable="prague",
            ),
            justification="coupled-rate-balance's criterion with the L4S team's later "
            "Scalable control in place of DCTCP.",
            origin="ours",
            figure="coexist-ratio",
        ),
        V.ClaimSpec(
            id="c-queue-at-target",
            statement="Under DualPI2 the C queue is held near its 15 ms target",
            quote="target = 15 ms (the PI2 controller of the Classic queue)",
            location="RFC 9332 Appendix A.1",
            paper="15 ms",
            tests=_grid_tests(
                g,
                "c_sojourn_ms",
                V.between(10.0, 20.0),
                "dualpi2",
                "mean per-packet C-queue delay (ms)",
            ),
            justification="A PI controller removes the steady-state error: the queuing delay "
            "should sit at the target; +-5 ms allows for the sawtooth of one Classic flow.",
            origin="ours",
            figure="coexist-delay",
            changed=_MOVED_TO_DCTCP + " " + _PER_PACKET,
        ),
        V.ClaimSpec(
            id="l-delay-p99",
            statement="Under DualPI2 the 99th percentile of the L queue's delay is below 2 ms",
            quote="very Low queuing Latency (L4S)",
            location="RFC 9332, abstract; native L AQM ramp 0.8-1.2 ms (Appendix A.1)",
            paper="no number (the native ramp ends at 1.2 ms)",
            tests=_grid_tests(
                g,
                "l_delay_p99_ms",
                V.below(2.0),
                "dualpi2",
                "99th percentile of the sampled L-queue head queuing time (ms)",
            ),
            justification="The native AQM marks every L packet queued 1.2 ms or more; 2 ms "
            "leaves a round trip of reaction at the smaller RTTs.",
            origin="ours",
            figure="coexist-delay",
            changed=_MOVED_TO_DCTCP,
        ),
        V.ClaimSpec(
            id="pi2-utilisation",
            statement="For Classic CUBIC traffic PI2 keeps the link as busy as PIE does",
            quote="This allows tighter control, giving responsiveness and stability better or "
            "no worse than PIE achieves, but without all its corrective heuristics.",
            location="PI2 paper, abstract; section 5 (PI2 against PIE with Classic traffic)",
            paper="no worse than PIE",
            tests={
                f"{rtt} ms": V.Test(
                    (
                        _m("pi2-classic", "utilization", aqm="pi2", rtt_ms=rtt)
                        - _m("pi2-classic", "utilization", aqm="pie", rtt_ms=rtt)
                    ).named(f"utilisation under PI2 minus under PIE [{rtt} ms]"),
                    V.above(-0.02),
                )
                for rtt in g["pi2_rtts_ms"]
            },
            justification="'No worse' as at most 2 points of utilisation less, paired by seed.",
            figure="pi2-classic",
        ),
        V.ClaimSpec(
            id="pi2-stability",
            statement="For Classic CUBIC traffic PI2's queue varies no more than PIE's",
            quote="giving responsiveness and stability better or no worse than PIE achieves",
            location="PI2 paper, abstract; section 5",
            paper="no worse than PIE",
            tests={
                f"{rtt} ms": V.Test(
                    (
                        _m("pi2-classic", "queue_sd_ms", aqm="pi2", rtt_ms=rtt)
                        / _m("pi2-classic", "queue_sd_ms", aqm="pie", rtt_ms=rtt)
                    )
                    .log10()
                    .named(f"log10 of PI2's over PIE's queue-delay standard deviation [{rtt} ms]"),
                    V.below(math.log10(1.25)),
                )
                for rtt in g["pi2_rtts_ms"]
            },
            justification="Stability as the standard deviation of the sampled queue (in ms of "
            "transmission); 'no worse' as at most 25% more than PIE's, paired by seed.",
            figure="pi2-classic",
        ),
    )


CLAIMS = claims_for("quick")
"""Decided on the quick grid's points in both modes (the full grid adds points to the figures
and tables; the claims read only points both modes run, with more seeds in full mode)."""
L4sStudy.claims = CLAIMS

STUDY = L4sStudy()


# ----- analysis ---------------------------------------------------------------------------------


def _analyze_coexist(runs: pd.DataFrame, found: Findings) -> None:
    if runs.empty:
        return
    runs = runs.assign(rate=runs["rate_mbps"])
    found.table(
        "coexist",
        "Coexistence: per-flow goodput ratio Classic/Scalable, delays and utilisation "
        "(means over seeds)",
        runs.groupby(["aqm", "scalable", "rate", "rtt_ms"])[
            [
                "ratio",
                "classic_mbps",
                "scalable_mbps",
                "utilization",
                "l_sojourn_ms",
                "l_delay_ms",
                "l_delay_p99_ms",
                "c_sojourn_ms",
                "c_delay_ms",
                "scalable_drops",
            ]
        ].mean(),
    )
    titles = {"dualpi2": "DualPI2 (coupled, k = 2)", "pie-ecn": "PIE with ECN (one queue)"}
    rates = sorted(runs["rate"].unique())
    fig = Figure(figsize=(10, 7), layout="constrained")
    for row, scalable in enumerate(SCALABLE):
        for col, aqm in enumerate(AQMS):
            ax = fig.add_subplot(2, 2, 2 * row + col + 1)
            sel = runs[(runs["aqm"] == aqm) & (runs["scalable"] == scalable)]
            for rate in rates:
                m = sel[sel["rate"] == rate].groupby("rtt_ms")["ratio"]
                ax.errorbar(
                    m.mean().index,
                    m.mean(),
                    yerr=m.std().fillna(0),
                    capsize=3,
                    marker="o",
                    label=f"{rate:g} Mb/s",
                )
            ax.axhline(1.0, color="k", lw=0.8)
            ax.axhspan(0.5, 2.0, color="0.9", zorder=0)
            ax.set_yscale("log")
            ax.set_ylim(0.01, 20)
            ax.set_xscale("log")
            ax.set_xlabel("base RTT (ms)")
            ax.set_ylabel(f"rate ratio CUBIC / {scalable} (per flow)")
            ax.set_title(f"{titles[aqm]}, {scalable}")
            ax.legend(fontsize=8)
    found.figure(
        "coexist-ratio",
        "Rate balance of CUBIC and a Scalable control: coupled against one queue",
        fig,
    )
    fig = Figure(figsize=(10, 3.6), layout="constrained")
    d = runs[(runs["aqm"] == "dualpi2") & (runs["scalable"] == "dctcp")]
    for i, (col, label) in enumerate(
        (
            ("l_delay_ms", "L queue, mean"),
            ("l_delay_p99_ms", "L queue, 99th percentile"),
            ("c_delay_ms", "C queue, mean"),
        )
    ):
        ax = fig.add_subplot(1, 3, i + 1)
        for rate in rates:
            m = d[d["rate"] == rate].groupby("rtt_ms")[col].mean()
            ax.plot(m.index, m.values, marker="o", label=f"{rate:g} Mb/s")
        ax.set_xscale("log")
        ax.set_xlabel("base RTT (ms)")
        ax.set_ylabel("queuing delay (ms)")
        ax.set_title(f"DualPI2 with DCTCP: {label}")
        ax.legend(fontsize=8)
    found.figure("coexist-delay", "DualPI2: L and C queue delays (CUBIC and DCTCP)", fig)


def _analyze_mix(runs: pd.DataFrame, found: Findings) -> None:
    if runs.empty:
        return
    table = runs.groupby(["aqm", "scalable", "mix"])[
        ["ratio", "classic_mbps", "scalable_mbps", "utilization", "l_sojourn_ms", "c_sojourn_ms"]
    ].mean()
    found.table(
        "mix",
        f"Mixes of Classic:Scalable flows at {MIX_RATE_MBPS} Mb/s, "
        f"{MIX_RTT_MS} ms (means over seeds)",
        table,
    )
    fig = Figure(figsize=(7, 3.6), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    mixes = list(dict.fromkeys(runs["mix"]))
    x = np.arange(len(mixes))
    bars = [(a, c) for a in AQMS for c in SCALABLE]
    width = 0.8 / len(bars)
    for j, (aqm, scalable) in enumerate(bars):
        m = runs[(runs["aqm"] == aqm) & (runs["scalable"] == scalable)].groupby("mix")["ratio"]
        ax.bar(
            x + (j - (len(bars) - 1) / 2) * width,
            [m.mean().get(k, np.nan) for k in mixes],
            width,
            yerr=[m.std().get(k, 0) for k in mixes],
            label=f"{aqm}, {scalable}",
            capsize=3,
        )
    ax.set_xticks(x, mixes)
    ax.set_yscale("log")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xlabel("flows Classic (CUBIC) : Scalable")
    ax.set_ylabel("rate ratio Classic / Scalable (per flow)")
    ax.legend()
    found.figure("mix", "Rate balance across mixes of flows", fig)


def _analyze_pi2(runs: pd.DataFrame, found: Findings) -> None:
    if runs.empty:
        return
    found.table(
        "pi2-classic",
        f"{PI2_FLOWS} CUBIC flows at {PI2_RATE_MBPS} Mb/s: PI2 against PIE (means over seeds)",
        runs.groupby(["aqm", "rtt_ms"])[["utilization", "queue_ms", "queue_sd_ms"]].mean(),
    )
    fig = Figure(figsize=(9, 3.4), layout="constrained")
    for i, (col, label) in enumerate(
        (
            ("queue_ms", "mean queue (ms)"),
            ("queue_sd_ms", "queue standard deviation (ms)"),
            ("utilization", "utilisation"),
        )
    ):
        ax = fig.add_subplot(1, 3, i + 1)
        for aqm in ("pi2", "pie"):
            m = runs[runs["aqm"] == aqm].groupby("rtt_ms")[col]
            ax.errorbar(
                m.mean().index, m.mean(), yerr=m.std().fillna(0), capsize=3, marker="o", label=aqm
            )
        ax.set_xscale("log")
        ax.set_xlabel("base RTT (ms)")
        ax.set_ylabel(label)
        ax.legend(fontsize=8)
    found.figure("pi2-classic", "PI2 against PIE with Classic traffic", fig)
