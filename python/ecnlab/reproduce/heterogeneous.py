"""Seed 001: RED against ECN with heterogeneous flows (``ecnlab reproduce heterogeneous``).

Kinicki and Zheng, "A Performance Study of Explicit Congestion Notification (ECN) with
Heterogeneous TCP Flows". N long-lived FTP flows in three equal groups with propagation RTTs of
300, 100 and 20 ms (fragile, average, robust) share a 10 Mb/s bottleneck (5 ms to the sink) whose
50-packet queue runs RED (drops), ECN (RED marking, drops beyond max_th) or ECNM (marks beyond
max_th too). 1000-byte packets, sender windows capped at 30 packets, each source's access link
at 600/N Mb/s (600 Mb/s offered in total), half the flows starting at 0 s and half at 2 s,
100 s runs of which the first 20 s are excluded. TCP Reno, as in the seed; NewReno is a second
series. The write-up is ``docs/reproduction/heterogeneous.md``.

Three parts, each a sweep whose axes are named as the columns of the analysis:

* ``flows``: the number of flows N (no path: it feeds the derived per-group flow counts, host
  offsets and access rate, :func:`group_settings`) x scheme (RED, ECN) x max_p x TCP, at
  max_th 30 (Figs. 2, 3, 6 and the lock-outs);
* ``grid``: N = 30 and 120 x scheme (RED, ECN, ECNM) x max_th x max_p (Figs. 4, 5, 7-11);
* ``aecn``: the adaptive ECN of ``docs/models/aecn.md`` on the N grid, against ECN in ``flows``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Callable

import duckdb
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..analysis import jain
from ._study import Claim, Findings, Results, SeedPlan, Study, claim, summary

__all__ = [
    "GROUPS",
    "STUDY",
    "Heterogeneous",
    "base_scenario",
    "evaluate_claims",
    "group_settings",
    "group_split",
    "per_run",
]

PACKET_BYTES = 1000
"""Seed 001's packets (ns-2 ``packetSize_``, headers included)."""
HEADER_BYTES = 40
MSS_BYTES = PACKET_BYTES - HEADER_BYTES
WINDOW_PKTS = 30
OFFERED_BPS = 600e6
GROUPS = (("fragile", 300.0), ("average", 100.0), ("robust", 20.0))
"""Flow groups and their propagation RTTs (ms): one-way access delays 145, 45 and 5 ms plus
the bottleneck's 5 ms."""
START_TIMES_S = (0.0, 2.0)
BOTTLENECK_DELAY_MS = 5.0
BOTTLENECK_BPS = 10e6

FLOW_COUNTS = (15, 30, 60, 120, 240, 480, 600)
GRID_FLOWS = (30, 120)
MAX_TH_PKTS = 30

_MODES: dict[str, dict[str, Any]] = {
    "quick": {
        "seeds": 3,
        "flows_max_p": (0.1, 0.5),
        "grid_max_p": (0.1, 0.2, 0.5, 0.8),
        "grid_max_th": (15, 30, 45),
        "grid_cc": ("reno",),
        "cc": ("reno", "newreno"),
    },
    "full": {
        "seeds": 5,
        "flows_max_p": (0.1, 0.2, 0.5, 0.8),
        "grid_max_p": (0.1, 0.2, 0.3, 0.5, 0.8),
        "grid_max_th": (15, 30, 45),
        "grid_cc": ("reno", "newreno"),
        "cc": ("reno", "newreno"),
    },
}


def group_split(n: int) -> list[tuple[str, float, float, int]]:
    """How N flows are split: ``(group, rtt_ms, start_s, flows)`` for the six bulk workloads.

    Each group has N // 3 flows (N must be a multiple of 3). Within a group, half start at
    0 s and half at 2 s; when a group's size is odd the fragile and robust groups start the
    extra flow at 0 s and the average group at 2 s, so the two start times differ by at most
    one flow overall (15 flows: 8 at 0 s, 7 at 2 s).
    """
    if n < 6 or n % 3:
        raise ValueError(f"number of flows {n}: must be a multiple of 3, at least 6")
    per_group = n // 3
    rows = []
    for i, (name, rtt) in enumerate(GROUPS):
        first = per_group // 2 if i == 1 else (per_group + 1) // 2
        rows.append((name, rtt, START_TIMES_S[0], first))
        rows.append((name, rtt, START_TIMES_S[1], per_group - first))
    return rows


def group_settings() -> dict[str, str]:
    """The sweep's ``[derived]`` table: the six workloads' flow counts and host offsets, the
    host counts and the access rate, as expressions of the ``n_flows`` axis (the same rule as
    :func:`group_split`; every flow has its own client and server, so its access links carry
    only it)."""
    per_group = "(n_flows // 3)"
    derived = {
        "topology.clients": "n_flows",
        "topology.servers": "n_flows",
        "topology.access_rate_bps": f"{OFFERED_BPS!r} / n_flows",
    }
    for i in range(len(GROUPS)):
        first = f"({per_group} // 2)" if i == 1 else f"(({per_group} + 1) // 2)"
        derived[f"workloads.{2 * i}.flows"] = first
        derived[f"workloads.{2 * i + 1}.flows"] = f"{per_group} - {first}"
    for k in range(1, 2 * len(GROUPS)):
        derived[f"workloads.{k}.host_offset"] = (
            f"workloads[{k - 1}].host_offset + workloads[{k - 1}].flows"
        )
    return derived


def scheme_settings() -> dict[str, str]:
    """``[derived]`` settings of the ``scheme`` axis: RED drops (the hosts are not
    ECN-capable); ECN marks between the thresholds and drops beyond max_th; ECNM also marks
    beyond max_th (``docs/models/red.md``, ``above_max``)."""
    return {
        "tcp.ecn": "scheme != 'red'",
        "topology.bottleneck.queue.aqm.ecn": "scheme != 'red'",
        "topology.bottleneck.queue.aqm.above_max": "'ecnm' if scheme == 'ecnm' else 'drop'",
    }


def red_aqm(max_p: float = 0.1, max_th: int = MAX_TH_PKTS, *, ecn: bool = True) -> dict[str, Any]:
    """RED as in the seed: min_th 5, no gentle region (the drop probability jumps to 1 at
    max_th), ns-2's other defaults (w_q 0.002, ``wait``, mean packet 500 bytes)."""
    return {"kind": "red", **_red_params(max_p, max_th, ecn=ecn)}


def _red_params(max_p: float, max_th: int = MAX_TH_PKTS, *, ecn: bool = True) -> dict[str, Any]:
    return {
        "ecn": ecn,
        "min_th_pkts": 5,
        "max_th_pkts": max_th,
        "max_p": max_p,
        "gentle": False,
    }


def base_scenario(n: int = 30, aqm: dict[str, Any] | None = None) -> dict[str, Any]:
    """Seed 001's scenario for ``n`` flows (section 3), with ``aqm`` on the bottleneck.

    TCP: Reno with the 2005-era endpoint (initial RTO 3 s, minimum RTO 1 s), one ACK per
    segment and a one-segment initial window (ns-2's TCPSink and ``windowInit_``), 960-byte
    segments so that packets are 1000 bytes with 40 bytes of headers, and the window capped
    at 30 packets through the receiver window.
    """
    workloads = [
        {
            "kind": "bulk",
            "flows": flows,
            "start_s": start,
            "rtt_ms": {"dist": "constant", "value": rtt},
            "rwnd_bytes": {"dist": "constant", "value": WINDOW_PKTS * MSS_BYTES},
        }
        for _, rtt, start, flows in group_split(n)
    ]
    offset = 0
    for w in workloads:
        w["host_offset"] = offset
        offset += w["flows"]
    return {
        "name": "seed001-heterogeneous",
        "duration_s": 100.0,
        "warmup_s": 20.0,
        "topology": {
            "clients": n,
            "servers": n,
            "access_rate_bps": OFFERED_BPS / n,
            "access_delay_ms": 0.0,
            "bottleneck": {
                "rate_bps": BOTTLENECK_BPS,
                "delay_ms": BOTTLENECK_DELAY_MS,
                "queue": {"limit_pkts": 50, "aqm": aqm or red_aqm()},
            },
        },
        "tcp": {
            "profile": "seed-2005",
            "congestion_control": "reno",
            "mss_bytes": MSS_BYTES,
            "header_bytes": HEADER_BYTES,
            "ecn": True,
            "ack_every_segments": 1,
            "initial_window_segments": 1,
        },
        "workloads": workloads,
    }


def _axis(name: str, values: Sequence[Any], path: str | None = None) -> dict[str, Any]:
    axis: dict[str, Any] = {"name": name, "values": list(values)}
    if path:
        axis["path"] = path
    return axis


_AQM = "topology.bottleneck.queue.aqm"


class Heterogeneous(Study):
    """Seed 001 (see the module docstring)."""

    name = "heterogeneous"
    title = (
        "Kinicki and Zheng, A Performance Study of Explicit Congestion Notification (ECN) "
        "with Heterogeneous TCP Flows"
    )
    doc = "docs/reproduction/heterogeneous.md"
    data_dir = Path(__file__).parent

    def sweeps(self, mode: str) -> list[dict[str, Any]]:
        return [{k: v for k, v in d.items() if k != "seeds"} for d in self._parts(mode)]

    def seed_plan(self, mode: str, part: str) -> SeedPlan:
        n = {d["name"]: d["seeds"] for d in self._parts(mode)}[part]
        count = n if isinstance(n, int) else len(n)
        return SeedPlan(count, 0, count)

    def _parts(self, mode: str) -> list[dict[str, Any]]:
        m = _MODES[mode]
        n_axis = _axis("n_flows", FLOW_COUNTS)
        cc_axis = _axis("cc", m["cc"], "tcp.congestion_control")
        derived = {**group_settings(), **scheme_settings()}
        flows = {
            "name": "flows",
            "base": base_scenario(),
            "seeds": m["seeds"],
            "axes": [
                n_axis,
                _axis("scheme", ["red", "ecn"]),
                _axis("max_p", m["flows_max_p"], f"{_AQM}.max_p"),
                cc_axis,
            ],
            "derived": derived,
        }
        grid = {
            "name": "grid",
            "base": base_scenario(),
            "seeds": m["seeds"],
            "axes": [
                _axis("n_flows", GRID_FLOWS),
                _axis("scheme", ["red", "ecn", "ecnm"]),
                _axis("max_th", m["grid_max_th"], f"{_AQM}.max_th_pkts"),
                _axis("max_p", m["grid_max_p"], f"{_AQM}.max_p"),
                _axis("cc", m["grid_cc"], "tcp.congestion_control"),
            ],
            "derived": derived,
        }
        aecn = {
            "name": "aecn",
            "base": base_scenario(aqm={"kind": "aecn", "red": _red_params(0.1), "n_ref_flows": 30}),
            "seeds": m["seeds"],
            "axes": [n_axis, cc_axis],
            "derived": group_settings(),
        }
        return [flows, grid, aecn]

    def analyze(self, results: Results, frames: Any = None) -> Findings:
        frames = {part: per_run(results.open(part)) for part in results.parts}
        found = Findings()
        found.claims.extend(evaluate_claims(frames["flows"], frames["grid"], frames["aecn"]))
        _figures(found, frames)
        _tables(found, frames)
        found.notes.append(
            "Rates are payload (960 of every 1000 bytes on the wire) over the 80 s after the "
            "20 s warm-up. Throughput counts every data segment reaching a receiver; goodput, as "
            "the seed defines it, leaves out the retransmitted ones; 'delivered' is new in-order "
            "data (a retransmission that fills a hole counts). Claims are decided on the Reno "
            "series (the seed's TCP) unless they say otherwise; NewReno is drawn dashed."
        )
        return found


STUDY = Heterogeneous()


# --- per-run measures -------------------------------------------------------------------------

_AXES = ("n_flows", "scheme", "max_p", "max_th", "cc")


def per_run(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per stored run: its axes and seed, and the measures the claims use.

    ``throughput_mbps``: payload of every data segment that reached a receiver in the window;
    ``goodput_mbps``: the seed's goodput, the same without retransmitted segments (section 2:
    goodput "does not include retransmitted packets in the count of packets successfully
    arriving at the receiver"); ``delivered_mbps``: new in-order payload (ecnlab's
    ``goodput_bytes``, which counts a retransmission that fills a hole); all over all flows,
    ``<group>_goodput_mbps`` and ``<group>_throughput_mbps`` (the group's aggregate),
    ``jain`` (Jain's index of per-flow goodput), ``lockouts`` (flows with no goodput),
    ``queue_delay_ms`` (mean wait at the down bottleneck), ``<group>_delay_ms`` (one-way
    delay: propagation, transmission on the access links and the bottleneck, mean wait),
    ``utilization``.
    """
    columns = {r[0] for r in con.execute("DESCRIBE runs").fetchall()}
    axes = [a for a in _AXES if a in columns]
    runs = con.execute(
        f"SELECT run_id, seed, {', '.join(axes)}, window_s, utilization_down AS utilization "
        "FROM runs WHERE status = 'done' AND NOT reference"
    ).df()
    if "max_th" not in runs:
        runs["max_th"] = MAX_TH_PKTS
    if "scheme" not in runs:
        runs["scheme"] = "aecn"
    flows = con.execute(
        "SELECT run_id, rtt_ms, goodput_bytes AS delivered_bytes, throughput_bytes, "
        "throughput_bytes - retx_received_bytes AS goodput_bytes FROM flows WHERE NOT reference"
    ).df()
    queue = con.execute(
        "SELECT run_id, sum((bin_start_ms + bin_end_ms) / 2 * packets) / sum(packets) AS q "
        "FROM sojourn WHERE link = 'bottleneck_down' GROUP BY run_id"
    ).df()
    runs = runs.set_index("run_id")
    window = runs["window_s"]
    by_run = flows.groupby("run_id")
    runs["goodput_mbps"] = by_run["goodput_bytes"].sum() * 8 / window / 1e6
    runs["throughput_mbps"] = by_run["throughput_bytes"].sum() * 8 / window / 1e6
    runs["delivered_mbps"] = by_run["delivered_bytes"].sum() * 8 / window / 1e6
    runs["jain"] = by_run["goodput_bytes"].apply(jain)
    runs["lockouts"] = by_run["delivered_bytes"].apply(lambda g: int((g == 0).sum()))
    runs["queue_delay_ms"] = queue.set_index("run_id")["q"].reindex(runs.index).fillna(0.0)
    for name, rtt in GROUPS:
        part = flows[flows["rtt_ms"] == rtt].groupby("run_id")
        for measure in ("goodput", "throughput"):
            runs[f"{name}_{measure}_mbps"] = (
                part[f"{measure}_bytes"].sum().reindex(runs.index).fillna(0) * 8 / window / 1e6
            )
        runs[f"{name}_delay_ms"] = one_way_delay_ms(rtt, runs["n_flows"], runs["queue_delay_ms"])
    return runs.reset_index()


def one_way_delay_ms(rtt_ms: float, n_flows: Any, queue_delay_ms: Any) -> Any:
    """Source-to-sink delay of a 1000-byte packet: half the propagation RTT, transmission on
    the two access links (600/N Mb/s each) and the bottleneck, and the mean bottleneck wait
    (a FIFO: every group waits the same). Waits on the access links, which run at 60 times a
    flow's fair share, are left out."""
    bits = PACKET_BYTES * 8
    access_ms = 2 * bits / (OFFERED_BPS / np.asarray(n_flows, dtype=float)) * 1e3
    return rtt_ms / 2 + access_ms + bits / BOTTLENECK_BPS * 1e3 + queue_delay_ms


# --- claims -----------------------------------------------------------------------------------


def _select(frame: pd.DataFrame, **where: Any) -> pd.DataFrame:
    mask = pd.Series(True, index=frame.index)
    for key, value in where.items():
        if isinstance(value, (list, tuple)):
            mask &= frame[key].isin(value)
        elif isinstance(value, float):
            mask &= np.isclose(frame[key].astype(float), value)
        else:
            mask &= frame[key] == value
    return frame[mask]


def _seeds(frame: pd.DataFrame, value: str, **where: Any) -> pd.Series:
    """``value`` per seed (sorted by seed) of the runs matching ``where`` (one per seed)."""
    part = _select(frame, **where)
    return part.groupby("seed")[value].mean().sort_index()


def _mean(frame: pd.DataFrame, value: str, **where: Any) -> float:
    s = _seeds(frame, value, **where)
    return float(s.mean()) if len(s) else math.nan


def _diff(frame: pd.DataFrame, value: str, a: dict[str, Any], b: dict[str, Any]) -> pd.Series:
    """Per-seed ``value`` of ``a`` minus that of ``b`` (paired by seed)."""
    return (_seeds(frame, value, **a) - _seeds(frame, value, **b)).dropna()


def _fmt_n(n: Any) -> str:
    return f"N={int(n)}"


def _ecn_above_red(
    frame: pd.DataFrame, counts: Sequence[int], id: str, text: str, *, paper: Any
) -> Claim:
    """ECN's goodput above RED's at every N of ``counts`` (max_p 0.5), paired by seed."""
    diffs = {
        n: _diff(
            frame,
            "goodput_mbps",
            {"scheme": "ecn", "max_p": 0.5, "n_flows": n},
            {"scheme": "red", "max_p": 0.5, "n_flows": n},
        )
        for n in counts
    }
    return claim(
        id,
        text,
        paper=paper,
        ours={_fmt_n(n): summary(d) for n, d in diffs.items()},
        criterion="mean over seeds of ECN minus RED goodput (Mb/s) > 0 at every N >= 30",
        passed=bool(diffs) and all(len(d) and d.mean() > 0 for d in diffs.values()),
    )


def evaluate_claims(
    flows: pd.DataFrame, grid: pd.DataFrame, aecn: pd.DataFrame, *, cc: str = "reno"
) -> list[Claim]:
    """Decide seed 001's claims from the per-run frames of the three parts (:func:`per_run`).

    Each claim is decided on the means over seeds of the ``cc`` series; ``ours`` holds the
    per-seed values (or paired differences) summarized.
    """
    out: list[Claim] = []
    f = flows[flows["cc"] == cc]
    g = grid[grid["cc"] == cc]
    a = aecn[aecn["cc"] == cc]
    counts = sorted(int(n) for n in f["n_flows"].unique())
    above15 = [n for n in counts if n >= 30]
    ecn05 = {"scheme": "ecn", "max_p": 0.5}
    red05 = {"scheme": "red", "max_p": 0.5}

    # Fig. 2: ECN (max_p 0.5) against RED from 30 flows up.
    out.append(
        _ecn_above_red(
            f,
            above15,
            "fig2-ecn-goodput-above-red",
            "From 30 flows up, ECN's goodput exceeds RED's (max_p 0.5, max_th 30; Fig. 2)",
            paper="ECN with max_p 0.5 gives the best goodput in all cases except 15 flows",
        )
    )
    series = [(s, p) for s in ("red", "ecn") for p in (0.1, 0.5)]
    best = {
        n: max(
            series, key=lambda sp: _mean(f, "goodput_mbps", scheme=sp[0], max_p=sp[1], n_flows=n)
        )
        for n in above15
    }
    out.append(
        claim(
            "fig2-ecn05-best",
            "ECN with max_p 0.5 has the highest goodput of RED and ECN at max_p 0.1 and 0.5 "
            "from 30 flows up (Fig. 2)",
            paper="ECN max_p 0.5 best in all cases except 15 flows",
            ours={_fmt_n(n): f"{s.upper()} {p}" for n, (s, p) in best.items()},
            criterion="the series with the highest mean goodput is ECN 0.5 at every N >= 30",
            passed=bool(best) and all(b == ("ecn", 0.5) for b in best.values()),
        )
    )
    others = [("red", 0.1), ("red", 0.5), ("ecn", 0.1)]
    drops = {}
    for s, p in others:
        small = [_mean(f, "goodput_mbps", scheme=s, max_p=p, n_flows=n) for n in counts if n <= 60]
        top = _mean(f, "goodput_mbps", scheme=s, max_p=p, n_flows=counts[-1])
        drops[f"{s.upper()} {p}"] = {"best N<=60": max(small), f"N={counts[-1]}": top}
    out.append(
        claim(
            "fig2-goodput-falls-with-flows",
            "For the other three series goodput drops markedly beyond about 60 flows (Fig. 2)",
            paper="a marked drop in goodput beginning at 64 flows",
            ours=drops,
            criterion=f"goodput at N={counts[-1]} below 95% of the series' best at N <= 60, for each "
            "of RED 0.1, RED 0.5, ECN 0.1",
            passed=all(d[f"N={counts[-1]}"] < 0.95 * d["best N<=60"] for d in drops.values()),
        )
    )

    # Fig. 3: delay.
    order_ok = []
    delays = {}
    for n in counts:
        row = {name: _mean(f, f"{name}_delay_ms", **ecn05, n_flows=n) for name, _ in GROUPS}
        delays[_fmt_n(n)] = row
        order_ok.append(row["robust"] < row["average"] < row["fragile"])
    out.append(
        claim(
            "fig3-robust-lowest-delay",
            "Robust flows have the lowest one-way delay, fragile the highest (max_p 0.5; Fig. 3)",
            paper="the clear advantage robust flows have with respect to delay",
            ours=delays,
            criterion="mean one-way delay robust < average < fragile at every N (ECN)",
            passed=all(order_ok),
        )
    )
    qd = {
        n: _diff(f, "queue_delay_ms", {**ecn05, "n_flows": n}, {**red05, "n_flows": n})
        for n in counts
    }
    higher = [n for n, d in qd.items() if len(d) and d.mean() > 0]
    largest = max((float(d.mean()) for d in qd.values() if len(d)), default=math.nan)
    out.append(
        claim(
            "fig3-ecn-delay-slightly-higher",
            "ECN's goodput gain costs a small increase in one-way delay (max_p 0.5; Fig. 3)",
            paper="the ECN goodput improvement is offset by a small increase in the one-way delay",
            ours={_fmt_n(n): summary(d) for n, d in qd.items()},
            criterion="ECN minus RED mean queueing delay (ms) > 0 at >= 2/3 of the N values and "
            "never above 10 ms (a quarter of the 40 ms a full 50-packet buffer holds)",
            passed=len(higher) * 3 >= 2 * len(qd) and largest <= 10,
        )
    )

    # Figs. 4 and 5.
    spreads = {}
    for s in ("red", "ecn"):
        for p in sorted(x for x in g["max_p"].unique() if x >= 0.2 - 1e-9):
            values = [
                _mean(g, "goodput_mbps", scheme=s, max_p=float(p), max_th=th, n_flows=30)
                for th in sorted(g["max_th"].unique())
            ]
            spreads[f"{s.upper()} {p:g}"] = (max(values) - min(values)) / statistics.fmean(values)
    out.append(
        claim(
            "fig4-maxth-little-effect",
            "With 30 flows max_th has little effect on goodput above max_p 0.2 (Fig. 4)",
            paper="max_th has little effect on goodput above max_p = 0.2",
            ours=spreads,
            criterion="(max - min) / mean of the mean goodput across max_th <= 0.05 for RED and "
            "ECN at every max_p >= 0.2",
            passed=bool(spreads) and max(spreads.values()) <= 0.05,
        )
    )
    configs = {
        (s, float(p), int(th)): _mean(
            g, "goodput_mbps", scheme=s, max_p=float(p), max_th=int(th), n_flows=120
        )
        for s in ("red", "ecn")
        for p in g["max_p"].unique()
        for th in g["max_th"].unique()
    }
    target = configs.get(("ecn", 0.5, 30), math.nan)
    top_key = max(configs, key=lambda k: configs[k]) if configs else None
    out.append(
        claim(
            "fig5-ecn05-th30-best-at-120",
            "With 120 flows ECN at max_p 0.5 and max_th 30 gives the highest goodput (Fig. 5)",
            paper="ECN with max_p = 0.5 and max_th = 30 yields the highest goodput",
            ours={
                "ECN 0.5/30": target,
                "best": f"{top_key[0].upper()} max_p {top_key[1]:g} max_th {top_key[2]}"
                if top_key
                else None,
                "best goodput": configs.get(top_key, math.nan) if top_key else None,
            },
            criterion="ECN 0.5/30's mean goodput is at least 99% of the best RED or ECN "
            "configuration's (differences below 1% are within the seed-to-seed spread)",
            passed=top_key is not None and target >= 0.99 * configs[top_key],
        )
    )
    red_best = {k: v for k, v in configs.items() if k[0] == "red"}
    red_top = max(red_best.values()) if red_best else math.nan
    out.append(
        claim(
            "fig5-no-good-red-setting",
            "With 120 flows no max_p setting makes RED work well (Fig. 5)",
            paper="there is no max_p setting for RED that works well",
            ours={"best RED": red_top, "ECN 0.5/30": target, "ratio": red_top / target},
            criterion="every RED configuration's mean goodput is more than 5% below ECN 0.5/30's",
            passed=red_top < 0.95 * target,
        )
    )

    # Fig. 6: Jain's index.
    pairs = [(n, p) for n in counts for p in sorted(f["max_p"].unique())]
    jd = {
        f"N={n} max_p={p:g}": _diff(
            f,
            "jain",
            {"scheme": "ecn", "max_p": p, "n_flows": n},
            {"scheme": "red", "max_p": p, "n_flows": n},
        )
        for n, p in pairs
    }
    fairer = sum(1 for d in jd.values() if len(d) and d.mean() >= 0)
    out.append(
        claim(
            "fig6-ecn-fairer",
            "ECN's Jain index is at least RED's in almost all configurations (Fig. 6)",
            paper="ECN is fairer than RED in almost all situations",
            ours={"ECN >= RED": f"{fairer} of {len(jd)}", **{k: summary(v) for k, v in jd.items()}},
            criterion="mean ECN minus RED Jain index >= 0 in at least 75% of the (N, max_p) pairs",
            passed=bool(jd) and fairer >= 0.75 * len(jd),
        )
    )
    fairest = {}
    for n in counts:
        fairest[n] = {
            f"{s.upper()} {p:g}": _mean(f, "jain", scheme=s, max_p=p, n_flows=n)
            for s in ("red", "ecn")
            for p in sorted(f["max_p"].unique())
        }
    at120 = max(fairest[120].values()) if 120 in fairest else math.nan
    beyond = {n: max(v.values()) for n, v in fairest.items() if n > 120}
    out.append(
        claim(
            "fig6-unfair-above-120",
            "Above 120 flows no setting prevents unfairness (Fig. 6)",
            paper="as the number of flows goes above 120 none of the choices prevent unfairness",
            ours={"fairest at N=120": at120, **{f"fairest at N={n}": v for n, v in beyond.items()}},
            criterion="at every N > 120 the fairest series' mean Jain index is below the fairest at N=120",
            passed=bool(beyond) and all(v < at120 for v in beyond.values()),
        )
    )
    winners = {n: max(v, key=lambda k: v[k]) for n, v in fairest.items() if n in (30, 60, 120)}
    out.append(
        claim(
            "fig6-fairest-setting-moves",
            "ECN with max_p 0.1 is fairest at 30 flows, max_p 0.5 at 60 and 120 flows (Fig. 6)",
            paper="ECN max_p 0.1 fairest at 30 flows, max_p 0.5 at 60 and 120",
            ours={_fmt_n(n): w for n, w in winners.items()},
            criterion="series with the highest mean Jain index among RED/ECN at max_p 0.1/0.5",
            passed=winners.get(30) == "ECN 0.1"
            and winners.get(60) == "ECN 0.5"
            and winners.get(120) == "ECN 0.5",
        )
    )

    # Lock-outs.
    locks = {
        s.upper(): {_fmt_n(n): _mean(f, "lockouts", scheme=s, max_p=0.5, n_flows=n) for n in counts}
        for s in ("red", "ecn")
    }
    low = [n for n in counts if n <= 120]
    high = [n for n in counts if n > 120]
    out.append(
        claim(
            "lockouts-above-120",
            "Locked-out flows (no goodput at all) appear for both RED and ECN above 120 flows",
            paper="locked out flows begin to appear for both RED and ECN above 120 flows",
            ours=locks,
            criterion="max_p 0.5, for both schemes: no lock-out in any run with N <= 120, and "
            "lock-outs in at least one run at every N > 120",
            passed=all(
                _select(f, scheme=s, max_p=0.5, n_flows=low)["lockouts"].sum() == 0
                and all(
                    _select(f, scheme=s, max_p=0.5, n_flows=n)["lockouts"].max() > 0 for n in high
                )
                for s in ("red", "ecn")
            ),
        )
    )

    # Figs. 7-10: groups.
    cases = {
        "Fig. 7 (30, 0.2)": (30, 0.2),
        "Fig. 8 (30, 0.8)": (30, 0.8),
        "Fig. 9 (120, 0.8)": (120, 0.8),
    }
    gd = {
        k: _diff(
            g,
            "goodput_mbps",
            {"scheme": "ecn", "n_flows": n, "max_p": p, "max_th": 30},
            {"scheme": "red", "n_flows": n, "max_p": p, "max_th": 30},
        )
        for k, (n, p) in cases.items()
    }
    out.append(
        claim(
            "fig7-9-ecn-goodput-above-red",
            "ECN's aggregate goodput exceeds RED's in Figs. 7, 8 and 9 (max_th 30)",
            paper="ECN provides better overall goodput than RED in all three graphs",
            ours={k: summary(v) for k, v in gd.items()},
            criterion="mean ECN minus RED aggregate goodput (Mb/s) > 0 in all three",
            passed=all(len(d) and d.mean() > 0 for d in gd.values()),
        )
    )
    ratios = {}
    for k, (n, p) in cases.items():
        for s in ("red", "ecn"):
            w = {"scheme": s, "n_flows": n, "max_p": p, "max_th": 30}
            ratios[f"{k} {s.upper()}"] = summary(
                _seeds(g, "robust_goodput_mbps", **w) / _seeds(g, "fragile_goodput_mbps", **w)
            )
    out.append(
        claim(
            "fig7-9-robust-over-fragile",
            "Robust flows get more goodput than fragile ones (Figs. 7-9, RED and ECN)",
            paper="neither RED nor ECN were fair to fragile and average flows",
            ours=ratios,
            criterion="mean robust over fragile group goodput > 1 in every case",
            passed=all(r["mean"] is not None and r["mean"] > 1 for r in ratios.values()),
        )
    )
    w8 = {"n_flows": 30, "max_p": 0.8, "max_th": 30}
    w7 = {"n_flows": 30, "max_p": 0.2, "max_th": 30}
    robust8 = _diff(g, "robust_goodput_mbps", {"scheme": "ecn", **w8}, {"scheme": "red", **w8})
    out.append(
        claim(
            "fig8-ecn-robust-above-red",
            "At 30 flows and max_p 0.8 ECN gives robust flows more goodput than RED (Fig. 8)",
            paper="the more aggressive ECN marking provides better goodput for robust flows than RED",
            ours=summary(robust8),
            criterion="mean ECN minus RED robust-group goodput (Mb/s) > 0",
            passed=len(robust8) > 0 and robust8.mean() > 0,
        )
    )
    gap = {
        p: _seeds(g, "robust_goodput_mbps", scheme="ecn", **w)
        - _seeds(g, "fragile_goodput_mbps", scheme="ecn", **w)
        for p, w in ((0.2, w7), (0.8, w8))
    }
    out.append(
        claim(
            "fig7-8-gap-not-reduced",
            "Raising ECN's max_p from 0.2 to 0.8 at 30 flows does not reduce the robust-fragile "
            "goodput gap (Figs. 7, 8)",
            paper="this change does not reduce the goodput gap between robust and fragile flows",
            ours={f"gap at max_p {p}": summary(v) for p, v in gap.items()},
            criterion="mean gap (Mb/s) at 0.8 >= 95% of the mean gap at 0.2",
            passed=gap[0.8].mean() >= 0.95 * gap[0.2].mean(),
        )
    )
    w9 = {"n_flows": 120, "max_p": 0.8, "max_th": 30}
    shift = {
        name: summary(
            _seeds(g, f"{name}_goodput_mbps", scheme="ecn", **w9)
            - _seeds(g, f"{name}_goodput_mbps", scheme="ecn", **w8)
        )
        for name, _ in GROUPS
    }
    total = {
        s: _mean(g, "goodput_mbps", scheme=s, **w9) / _mean(g, "goodput_mbps", scheme=s, **w8) - 1
        for s in ("red", "ecn")
    }
    out.append(
        claim(
            "fig9-more-flows-shift-goodput",
            "From 30 to 120 flows (ECN, max_p 0.8) the robust group's goodput falls, the average "
            "and fragile groups' rise, ECN's total stays about the same and RED's suffers more "
            "(Figs. 8, 9)",
            paper="overall goodput relatively unchanged for ECN; robust goes down, average and "
            "fragile increase slightly; RED goodput is adversely affected by more flows",
            ours={
                **{f"{k} change (Mb/s)": v for k, v in shift.items()},
                "ECN total change": total["ecn"],
                "RED total change": total["red"],
            },
            criterion="robust change < 0 < average and fragile changes; |ECN total change| < 5%; "
            "RED's relative change below ECN's",
            passed=shift["robust"]["mean"]
            < 0
            < min(shift["average"]["mean"], shift["fragile"]["mean"])
            and abs(total["ecn"]) < 0.05
            and total["red"] < total["ecn"],
        )
    )
    red_gp, ecn_gp = (_seeds(g, "goodput_mbps", scheme=s, **w9) for s in ("red", "ecn"))
    red_tp, ecn_tp = (_seeds(g, "throughput_mbps", scheme=s, **w9) for s in ("red", "ecn"))
    gp_deficit = 1 - red_gp / ecn_gp
    tp_deficit = 1 - red_tp / ecn_tp
    out.append(
        claim(
            "fig9-red-goodput-well-below-ecn",
            "At 120 flows and max_p 0.8 RED's goodput is well below ECN's (Fig. 9)",
            paper=0.15,
            ours=summary(gp_deficit),
            criterion="mean of 1 - RED/ECN goodput (per seed) >= 0.075 (half the seed's 15%)",
            passed=len(gp_deficit) > 0 and gp_deficit.mean() >= 0.075,
        )
    )
    out.append(
        claim(
            "fig10-throughputs-close",
            "...while their throughputs are close: retransmissions hide RED's deficit (Fig. 10)",
            paper="aggregate RED throughput is only slightly lower than aggregate ECN throughput",
            ours={
                "throughput deficit": summary(tp_deficit),
                "goodput deficit": summary(gp_deficit),
            },
            criterion="RED's mean goodput deficit (1 - RED/ECN) is positive and its mean "
            "throughput deficit below half of it",
            passed=len(tp_deficit) > 0
            and gp_deficit.mean() > 0
            and tp_deficit.mean() < 0.5 * gp_deficit.mean(),
        )
    )

    # Fig. 11: ECN against ECNM at 120 flows.
    ps = sorted(float(p) for p in g["max_p"].unique())
    vs = {
        f"max_p {p:g}": _diff(
            g,
            "goodput_mbps",
            {"scheme": "ecn", "n_flows": 120, "max_p": p, "max_th": 30},
            {"scheme": "ecnm", "n_flows": 120, "max_p": p, "max_th": 30},
        )
        for p in ps
    }
    out.append(
        claim(
            "fig11-ecn-above-ecnm",
            "With 120 flows ECN's goodput exceeds ECNM's except at small max_p (max_th 30; Fig. 11)",
            paper="ECN provides better goodput except at small values of max_p",
            ours={k: summary(v) for k, v in vs.items()},
            criterion="mean ECN minus ECNM goodput > 0 at every max_p >= 0.2",
            passed=all(len(v) and v.mean() > 0 for k, v in zip(ps, vs.values()) if k >= 0.2 - 1e-9),
        )
    )
    sensitivity = {}
    for s in ("ecn", "ecnm"):
        ranges = []
        for p in ps:
            values = [
                _mean(g, "goodput_mbps", scheme=s, n_flows=120, max_p=p, max_th=int(th))
                for th in sorted(g["max_th"].unique())
            ]
            ranges.append(max(values) - min(values))
        sensitivity[s.upper()] = statistics.fmean(ranges)
    out.append(
        claim(
            "fig11-ecnm-maxth-sensitive",
            "ECNM is more sensitive to max_th than ECN (120 flows; Fig. 11)",
            paper="ECNM appears quite sensitive to the max_th setting",
            ours={f"{k} mean range over max_th (Mb/s)": v for k, v in sensitivity.items()},
            criterion="the goodput range across max_th, averaged over max_p, is larger for ECNM",
            passed=sensitivity["ECNM"] > sensitivity["ECN"],
        )
    )

    # AECN (the seed's future work) against ECN at the same base max_p.
    ecn01 = {"scheme": "ecn", "max_p": 0.1}
    aj = {
        n: (_seeds(a, "jain", n_flows=n) - _seeds(f, "jain", **ecn01, n_flows=n)).dropna()
        for n in counts
    }
    better = [n for n, d in aj.items() if len(d) and d.mean() > 0]
    out.append(
        claim(
            "aecn-fairer-than-ecn",
            "An adaptive ECN (AECN, max_p scaled with the flow count and per-flow rate) is fairer "
            "than ECN at the same base max_p 0.1",
            paper="an adaptive version of ECN should provide better performance than ECN",
            ours={
                "AECN > ECN": f"{len(better)} of {len(aj)} N",
                **{_fmt_n(n): summary(d) for n, d in aj.items()},
            },
            criterion="mean AECN minus ECN (max_p 0.1) Jain index > 0 at >= 2/3 of the N values",
            passed=len(better) * 3 >= 2 * len(aj),
        )
    )

    # NewReno, ours: does ECN's advantage survive NewReno's recovery?
    nr = flows[flows["cc"] == "newreno"]
    if len(nr):
        out.append(
            _ecn_above_red(
                nr,
                above15,
                "newreno-ecn-goodput-above-red",
                "With NewReno instead of Reno, ECN's goodput still exceeds RED's from 30 flows "
                "up (max_p 0.5, max_th 30; not in the seed)",
                paper=None,
            )
        )
    return out


# --- figures and tables -----------------------------------------------------------------------

_STYLE = {"reno": "-", "newreno": "--"}
_COLORS = {"red": "tab:red", "ecn": "tab:blue", "ecnm": "tab:green", "aecn": "tab:purple"}


def _series(
    frame: pd.DataFrame, x: str, value: str, keys: Sequence[str]
) -> Iterable[tuple[tuple[Any, ...], pd.DataFrame]]:
    """Mean and sd over seeds of ``value`` against ``x``, per ``keys``."""
    stats = frame.groupby([*keys, x])[value].agg(["mean", "std"]).reset_index()
    for key, part in stats.groupby(list(keys), sort=True):
        yield (key if isinstance(key, tuple) else (key,)), part.sort_values(x)


def _line_figure(
    frame: pd.DataFrame,
    value: str,
    ylabel: str,
    *,
    x: str = "n_flows",
    keys: Sequence[str] = ("scheme", "max_p", "cc"),
    label: Callable[[tuple[Any, ...]], str] | None = None,
    logx: bool = True,
) -> Figure:
    fig = Figure(figsize=(7, 4.2), layout="constrained")
    ax = fig.subplots()
    markers = "osv^D<>p"
    for i, (key, part) in enumerate(_series(frame, x, value, keys)):
        d = dict(zip(keys, key))
        ax.errorbar(
            part[x],
            part["mean"],
            yerr=part["std"].fillna(0),
            linestyle=_STYLE.get(d.get("cc", "reno"), "-"),
            marker=markers[i % len(markers)],
            color=_COLORS.get(d.get("scheme", ""), None) if "max_p" not in d else None,
            capsize=2,
            label=label(key) if label else " ".join(str(v) for v in key),
        )
    if logx:
        ax.set_xscale("log")
        xs = sorted(frame[x].unique())
        ax.set_xticks(xs, [str(int(v)) for v in xs])
        ax.minorticks_off()
    ax.set_xlabel({"n_flows": "number of flows", "max_p": "max_p"}.get(x, x))
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", ncol=2)
    return fig


def _label(key: tuple[Any, ...]) -> str:
    scheme, max_p, cc = key
    return f"{scheme.upper()} max_p {max_p:g} ({'Reno' if cc == 'reno' else 'NewReno'})"


def _goodput_vs_max_p(grid: pd.DataFrame, n: int, schemes: Sequence[str]) -> Figure:
    """Goodput against max_p at ``n`` flows, one line per scheme, max_th and TCP."""
    part = grid[(grid["n_flows"] == n) & grid["scheme"].isin(list(schemes))]
    return _line_figure(
        part,
        "goodput_mbps",
        "goodput (Mb/s)",
        x="max_p",
        keys=("scheme", "max_th", "cc"),
        label=lambda k: (
            f"{k[0].upper()} max_th {k[1]}" + (" (NewReno)" if k[2] == "newreno" else "")
        ),
        logx=False,
    )


def _group_bars(frame: pd.DataFrame, measure: str, cases: Sequence[tuple[int, float]]) -> Figure:
    fig = Figure(figsize=(4.2 * len(cases), 3.8), layout="constrained")
    axes = fig.subplots(1, len(cases), squeeze=False)[0]
    names = [name for name, _ in GROUPS] + ["aggregate"]
    for ax, (n, p) in zip(axes, cases):
        for j, s in enumerate(("red", "ecn")):
            part = _select(frame, scheme=s, n_flows=n, max_p=p, max_th=30, cc="reno")
            cols = [f"{name}_{measure}_mbps" for name, _ in GROUPS] + [f"{measure}_mbps"]
            means = [part[c].mean() for c in cols]
            sds = [part[c].std() for c in cols]
            xs = np.arange(len(names)) + (j - 0.5) * 0.4
            ax.bar(
                xs,
                means,
                0.4,
                yerr=np.nan_to_num(sds),
                capsize=3,
                color=_COLORS[s],
                label=s.upper(),
            )
        ax.set_xticks(np.arange(len(names)), names)
        ax.set_title(f"{n} flows, max_p {p:g}, max_th 30")
        ax.set_ylabel(f"{measure} (Mb/s)")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize="small")
    return fig


def _figures(found: Findings, frames: dict[str, pd.DataFrame]) -> None:
    flows, grid, aecn = frames["flows"], frames["grid"], frames["aecn"]
    found.figure(
        "fig2-goodput-vs-flows",
        "Fig. 2: aggregate goodput against the number of flows (max_th 30)",
        _line_figure(flows, "goodput_mbps", "goodput (Mb/s)", label=_label),
    )
    delay = flows[np.isclose(flows["max_p"], 0.5) & (flows["cc"] == "reno")]
    long = pd.concat(
        [delay.assign(group=name, delay=delay[f"{name}_delay_ms"]) for name, _ in GROUPS]
    )
    found.figure(
        "fig3-delay",
        "Fig. 3: one-way delay per group (max_p 0.5, max_th 30, Reno)",
        _line_figure(
            long,
            "delay",
            "one-way delay (ms)",
            keys=("scheme", "group"),
            label=lambda k: f"{k[0].upper()} {k[1]}",
        ),
    )
    for n, key in ((30, "fig4-goodput-30-flows"), (120, "fig5-goodput-120-flows")):
        found.figure(
            key,
            f"Fig. {4 if n == 30 else 5}: goodput against max_p, {n} flows",
            _goodput_vs_max_p(grid, n, ("red", "ecn")),
        )
    found.figure(
        "fig6-jain-vs-flows",
        "Fig. 6: Jain's index of per-flow goodput against the number of flows (max_th 30)",
        _line_figure(flows, "jain", "Jain's fairness index", label=_label),
    )
    found.figure(
        "fig7-8-9-goodput-by-group",
        "Figs. 7-9: goodput by group (Reno)",
        _group_bars(grid, "goodput", [(30, 0.2), (30, 0.8), (120, 0.8)]),
    )
    found.figure(
        "fig10-throughput-by-group",
        "Fig. 10: throughput by group, retransmissions included (120 flows, max_p 0.8, Reno)",
        _group_bars(grid, "throughput", [(120, 0.8)]),
    )
    found.figure(
        "fig11-ecn-vs-ecnm",
        "Fig. 11: ECN and ECNM goodput against max_p, 120 flows",
        _goodput_vs_max_p(grid, 120, ("ecn", "ecnm")),
    )
    found.figure(
        "lockouts-vs-flows",
        "Locked-out flows (no goodput in the window) against the number of flows (max_th 30)",
        _line_figure(flows, "lockouts", "locked-out flows", label=_label),
    )
    both = pd.concat(
        [
            flows[np.isclose(flows["max_p"], 0.1) & (flows["scheme"] == "ecn")],
            aecn.assign(max_p=0.1),
        ]
    )
    fig = Figure(figsize=(11, 3.8), layout="constrained")
    for ax, (value, ylabel) in zip(
        fig.subplots(1, 3),
        (
            ("goodput_mbps", "goodput (Mb/s)"),
            ("jain", "Jain's index"),
            ("lockouts", "locked-out flows"),
        ),
    ):
        for (scheme, cc), part in _series(both, "n_flows", value, ("scheme", "cc")):
            ax.errorbar(
                part["n_flows"],
                part["mean"],
                yerr=part["std"].fillna(0),
                linestyle=_STYLE[cc],
                marker="o",
                color=_COLORS[scheme],
                capsize=2,
                label=f"{scheme.upper()} ({'Reno' if cc == 'reno' else 'NewReno'})",
            )
        ax.set_xscale("log")
        ax.set_xticks(list(FLOW_COUNTS), [str(n) for n in FLOW_COUNTS])
        ax.minorticks_off()
        ax.set_xlabel("number of flows")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    found.figure("aecn-vs-ecn", "AECN against ECN (base max_p 0.1, max_th 30)", fig)


def _tables(found: Findings, frames: dict[str, pd.DataFrame]) -> None:
    measures = [
        "goodput_mbps",
        "throughput_mbps",
        "delivered_mbps",
        "jain",
        "lockouts",
        "queue_delay_ms",
        "utilization",
    ]
    groups = [f"{name}_goodput_mbps" for name, _ in GROUPS]
    flows = pd.concat([frames["flows"], frames["aecn"].assign(max_p=0.1)])
    found.table(
        "by-flows",
        "Means over seeds against the number of flows (max_th 30; AECN's base max_p 0.1)",
        flows.groupby(["cc", "scheme", "max_p", "n_flows"])[measures + groups].mean().round(4),
    )
    found.table(
        "grid",
        "Means over seeds, 30 and 120 flows",
        frames["grid"]
        .groupby(["cc", "n_flows", "scheme", "max_th", "max_p"])[measures + groups]
        .mean()
        .round(4),
    )
