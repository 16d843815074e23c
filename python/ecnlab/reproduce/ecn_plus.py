"""Seed 000, Kuzmanovic, "The Power of Explicit Congestion Notification" (SIGCOMM 2005).

``ecnlab reproduce ecn-plus [--quick | --full]`` runs four parts (each a resumable sweep):

* ``web``: web sessions over a 100 Mb/s bottleneck at 90% and 105% offered load (section 4.2),
  RED, RED* (Adaptive RED auto-configured for 5 ms, dropping or marking beyond max_th), REM and
  PI (b* and q_ref 62.5 kB), each with no ECN, ECN and ECN+, and the uncongested 1 Gb/s
  reference: Figures 2-5 and Table 1;
* ``threshold``: the step marker at 62.5 kB with ECN+ at both loads, against PI without ECN from
  ``web``: Figure 6 and its 105% counterpart;
* ``deployment``: RED* at 98% load with ECN+ servers and 5%, 50%, 95% ECN clients: Figure 10;
* ``testbed``: section 7 (and seed 003), TPC-W-like browsers over persistent connections offering
  15 Mb/s to a 10 Mb/s RED* bottleneck, no ECN, ECN and ECN+, against 100 Mb/s: Figures 11-12
  and the mean response times and throughputs of the text.

Every run of a seed offers the same traffic whatever the AQM or ECN setting (the workloads draw
from streams of their own), so the claims compare paired runs. The write-up is
``docs/reproduction/ecn-plus.md``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .. import analysis
from ._study import Claim, Findings, Results, SeedPlan, Study, claim, summary

__all__ = ["STUDY", "EcnPlus", "ordering"]

DATA = Path(__file__).parent / "data" / "ecn_plus"

PACKET_BYTES = 1500
"""Wire size of a full segment with the ``seed-2005`` profile (MSS 1460 + 40 header bytes)."""
TARGET_BYTES = 62_500
"""5 ms at 100 Mb/s: the seed's 62 kB of b* and q_ref, and the threshold marker's K."""
TARGET_PKTS = round(TARGET_BYTES / PACKET_BYTES)  # 42

# The AQMs of section 4 (ECN is switched on by the ecn_mode axis).
AQMS: dict[str, dict[str, Any]] = {
    "RED": {"kind": "ared", "target_delay_ms": 5, "mean_pkt_bytes": PACKET_BYTES},
    "RED*": {
        "kind": "ared",
        "target_delay_ms": 5,
        "mean_pkt_bytes": PACKET_BYTES,
        "above_max": "mark",
    },
    "REM": {"kind": "rem", "b_star_pkts": TARGET_PKTS, "mean_pkt_bytes": PACKET_BYTES},
    "PI": {"kind": "pi", "q_ref_pkts": TARGET_PKTS, "mean_pkt_bytes": PACKET_BYTES},
}
THRESHOLD = {"kind": "threshold", "k_bytes": TARGET_BYTES, "ecn": True}
ECN_MODES = ("no ECN", "ECN", "ECN+")
LOADS = (90, 105)
FRACTIONS = (0.05, 0.5, 0.95)

# Switches of one ECN mode: the AQM marks, the hosts negotiate ECN, servers send ECT SYN-ACKs.
_ECN_DERIVED = {
    "topology.bottleneck.queue.aqm.ecn": "ecn_mode != 'no ECN'",
    "tcp.ecn": "ecn_mode != 'no ECN'",
    "tcp.ecn_plus": "'seed' if ecn_mode == 'ECN+' else 'off'",
}
_ECN_AXIS = {"name": "ecn_mode", "values": list(ECN_MODES)}
_LOAD_AXIS = {
    "name": "load",
    "path": "load.offered_load_mbps",
    "values": list(LOADS),
    "labels": [f"{v}%" for v in LOADS],
}
UNCONGESTED = "uncongested network"

# Simulated seconds (duration, warm-up) and seeds per mode. Web sessions last minutes (10
# pages, Pareto think times of mean 10 s), so the warm-up must cover a session's life.
DURATIONS: dict[str, dict[str, Any]] = {
    "quick": {"web": (200, 100), "testbed": (300, 60), "seeds": 3},
    "full": {"web": (1500, 300), "testbed": (1800, 300), "seeds": 5},
}

RESPONSE_S = 0.5
"""The response time the claims read the CDFs at (seed 000 quotes F(0.5 s) for RED*)."""
TAIL_S = 3.0
"""Where the testbed's tails are compared (Fig. 12): the initial RTO of a lost SYN or SYN-ACK."""
CDF_BIN_S = 0.005
CDF_MAX_S = 2.0


class EcnPlus(Study):
    """ECN+ (ECN-capable SYN-ACKs) under RED, RED*, REM, PI and a threshold marker."""

    name = "ecn-plus"
    title = 'Kuzmanovic, "The Power of Explicit Congestion Notification", SIGCOMM 2005'
    doc = "docs/reproduction/ecn-plus.md"
    data_dir = DATA

    def sweeps(self, mode: str) -> list[dict[str, Any]]:
        return [{k: v for k, v in d.items() if k != "seeds"} for d in self._parts(mode)]

    def seed_plan(self, mode: str, part: str) -> SeedPlan:
        n = {d["name"]: d["seeds"] for d in self._parts(mode)}[part]
        count = n if isinstance(n, int) else len(n)
        return SeedPlan(count, 0, count)

    def _parts(self, mode: str) -> list[dict[str, Any]]:
        plan = DURATIONS[mode]
        seeds = plan["seeds"]
        web_set = {"duration_s": plan["web"][0], "warmup_s": plan["web"][1]}
        uncongested = {
            "label": UNCONGESTED,
            "set": {
                "topology.bottleneck.rate_bps": 1e9,
                "topology.bottleneck.queue.aqm": {"kind": "droptail"},
            },
        }
        return [
            {
                "name": "web",
                "base": "web-sessions.toml",
                "seeds": seeds,
                "set": web_set,
                "axes": [
                    _LOAD_AXIS,
                    {
                        "name": "aqm",
                        "path": "topology.bottleneck.queue.aqm",
                        "values": list(AQMS.values()),
                        "labels": list(AQMS),
                    },
                    _ECN_AXIS,
                ],
                "derived": dict(_ECN_DERIVED),
                "reference": {**uncongested, "vary": ["load"]},
            },
            {
                "name": "threshold",
                "base": "web-sessions.toml",
                "seeds": seeds,
                "set": {
                    **web_set,
                    "topology.bottleneck.queue.aqm": THRESHOLD,
                    "tcp.ecn": True,
                    "tcp.ecn_plus": "seed",
                },
                "axes": [_LOAD_AXIS],
            },
            {
                "name": "deployment",
                "base": "web-sessions.toml",
                "seeds": seeds,
                "set": {
                    **web_set,
                    "load.offered_load_mbps": 98,
                    "topology.bottleneck.queue.aqm": {**AQMS["RED*"], "ecn": True},
                    "tcp.ecn": True,
                    "tcp.ecn_plus": "seed",
                },
                "axes": [
                    {
                        "name": "fraction",
                        "path": "tcp.clients.ecn_fraction",
                        "values": list(FRACTIONS),
                        "labels": [f"{round(100 * f)}%" for f in FRACTIONS],
                    }
                ],
                "reference": {**uncongested, "vary": []},
            },
            {
                "name": "testbed",
                "base": "testbed.toml",
                "seeds": seeds,
                "set": {"duration_s": plan["testbed"][0], "warmup_s": plan["testbed"][1]},
                "axes": [
                    {
                        "name": "aqm",
                        "path": "topology.bottleneck.queue.aqm",
                        "values": [AQMS["RED*"]],
                        "labels": ["RED*"],
                    },
                    _ECN_AXIS,
                ],
                "derived": dict(_ECN_DERIVED),
                "reference": {
                    "label": "uncongested network (100 Mb/s)",
                    "vary": [],
                    "set": {
                        "topology.bottleneck.rate_bps": 100e6,
                        "topology.bottleneck.queue.aqm": {"kind": "droptail"},
                    },
                },
            },
        ]

    def analyze(self, results: Results, frames: Any = None) -> Findings:
        found = Findings()
        web = results.open("web")
        thr = results.open("threshold")
        dep = results.open("deployment")
        bed = results.open("testbed")
        m_web = run_metrics(web, ["load_label", "aqm_label", "ecn_mode_label"])
        m_thr = run_metrics(thr, ["load_label"])
        m_dep = run_metrics(dep, ["fraction_label"], by_class=True)
        m_dep_ref = run_metrics(dep, ["fraction_label"])
        m_bed = run_metrics(bed, ["ecn_mode_label"])
        m_web = with_relative_throughput(m_web, ["load_label"])
        m_thr = with_relative_throughput(m_thr, ["load_label"], reference=m_web)
        m_bed = with_relative_throughput(m_bed, [])

        found.claims += web_claims(m_web)
        found.claims += threshold_claims(m_web, m_thr)
        found.claims += deployment_claims(m_dep, m_dep_ref)
        found.claims += testbed_claims(m_bed)

        found.table("table1", "Table 1: normalized throughput (%), paper and ecnlab", table1(m_web))
        found.table(
            "fig6", "Figure 6: threshold with ECN+ against PI without ECN", fig6_table(m_web, m_thr)
        )
        found.table(
            "testbed", "Section 7 testbed: mean response time and throughput", testbed_table(m_bed)
        )
        found.table(
            "response-times",
            "Figures 2-5: % of completed responses within 0.5 s and mean response time",
            response_table(m_web),
        )
        found.table(
            "deployment",
            "Figure 10: % of completed responses within 0.5 s per client class",
            deployment_table(m_dep, m_dep_ref),
        )
        found.table("runs-web", "Per-run measures of the web part", _rounded(m_web))

        for i, aqm in enumerate(AQMS):
            curves = {
                load: {
                    mode: cdf_curve(
                        web,
                        f"aqm_label = '{aqm}' AND ecn_mode_label = '{mode}' AND load_label = '{load}'",
                    )
                    for mode in ECN_MODES
                }
                for load in _labels(LOADS)
            }
            refs = {
                load: cdf_curve(web, f"reference AND load_label = '{load}'")
                for load in _labels(LOADS)
            }
            found.figure(
                f"fig{i + 2}-{aqm.lower().replace('*', 'star')}",
                f"Figure {i + 2}: {aqm} response-time CDFs",
                cdf_figure(aqm, curves, refs),
            )
        fig6 = {
            load: {
                "threshold, ECN+": cdf_curve(thr, f"load_label = '{load}'"),
                "PI, no ECN": cdf_curve(
                    web, f"aqm_label = 'PI' AND ecn_mode_label = 'no ECN' AND load_label = '{load}'"
                ),
            }
            for load in _labels(LOADS)
        }
        refs = {
            load: cdf_curve(web, f"reference AND load_label = '{load}'") for load in _labels(LOADS)
        }
        found.figure(
            "fig6-threshold",
            "Figure 6: threshold with ECN+ vs PI without ECN",
            cdf_figure("threshold vs PI", fig6, refs),
        )
        dep_curves = {
            "": {
                f"{f} ECN clients: {cls}": cdf_curve(
                    dep,
                    f"NOT reference AND fraction_label = '{f}' AND {'' if cls == 'ECN' else 'NOT '}ecn",
                )
                for f in _fraction_labels()
                for cls in ("ECN", "non-ECN")
            }
        }
        found.figure(
            "fig10-deployment",
            "Figure 10: incremental deployment, 98% load, RED* with ECN+ servers",
            cdf_figure(
                "98% load",
                dep_curves,
                {"": cdf_curve(dep, "reference")},
                {
                    f"{f} ECN clients: {cls}": {
                        "color": color,
                        "linestyle": "-" if cls == "ECN" else ":",
                    }
                    for f, color in zip(_fraction_labels(), ("tab:blue", "tab:orange", "tab:green"))
                    for cls in ("ECN", "non-ECN")
                },
            ),
        )
        found.figure(
            "fig11-testbed-cdf",
            "Figure 11: testbed response-time CDFs",
            testbed_figure(bed, complementary=False),
        )
        found.figure(
            "fig12-testbed-ccdf",
            "Figure 12: testbed response-time CCDFs",
            testbed_figure(bed, complementary=True),
        )
        found.notes.append(
            "Normalized throughput is the down bottleneck's delivered wire bytes over its "
            "capacity in the measurement window (the only reading under which the paper's 105% "
            "column and testbed figure of 99% are possible); the tables also give it relative to "
            "the uncongested reference run of the same seed and load."
        )
        return found


STUDY = EcnPlus()


# --- measures ---------------------------------------------------------------------------------


def _labels(loads: Sequence[int]) -> list[str]:
    return [f"{v}%" for v in loads]


def _fraction_labels() -> list[str]:
    return [f"{round(100 * f)}%" for f in FRACTIONS]


def run_metrics(
    con: duckdb.DuckDBPyConnection, labels: Sequence[str], *, by_class: bool = False
) -> pd.DataFrame:
    """One row per run (and per client class ``ecn`` with ``by_class``): the response-time
    measures of completed exchanges and the bottleneck's normalized throughput.

    Columns: ``run_id``, ``seed``, ``reference``, the ``labels``, [``ecn``], ``exchanges``,
    ``completed``, ``f05`` (fraction of completed responses within 0.5 s), ``f1``, ``f2``,
    ``tail`` (fraction above :data:`TAIL_S`),
    ``mean_rt_s``, ``mean_rt_first_s`` (first exchanges of their connections: the ones that
    carry the handshake), ``delivered_bytes``, ``nt`` (delivered over capacity).
    """
    cols = ", ".join(["run_id", "seed", "reference", *labels, *(["ecn"] if by_class else [])])
    rt = con.execute(
        f"""
        SELECT {cols}, count(*) AS exchanges, count(*) FILTER (completed) AS completed,
               avg((response_time_s <= {RESPONSE_S})::DOUBLE) FILTER (completed) AS f05,
               avg((response_time_s <= 1.0)::DOUBLE) FILTER (completed) AS f1,
               avg((response_time_s <= 2.0)::DOUBLE) FILTER (completed) AS f2,
               avg((response_time_s > {TAIL_S})::DOUBLE) FILTER (completed) AS tail,
               avg(response_time_s) FILTER (completed) AS mean_rt_s,
               avg(response_time_s) FILTER (completed AND seq_in_flow = 0) AS mean_rt_first_s
        FROM exchanges GROUP BY ALL
        """
    ).df()
    links = con.execute(
        "SELECT l.run_id, l.link, l.t_start_s, l.t_end_s, l.delivered_bytes, r.bottleneck_rate_bps "
        "FROM links l JOIN runs r USING (run_id)"
    ).df()
    nt = analysis.normalized_throughput(links, "bottleneck_rate_bps", "run_id")
    nt = nt.rename(columns={"normalized_throughput": "nt"})[["run_id", "delivered_bytes", "nt"]]
    out = rt.merge(nt, on="run_id", how="left")
    return out.sort_values([*labels, "seed"], kind="stable").reset_index(drop=True)


def with_relative_throughput(
    metrics: pd.DataFrame, keys: Sequence[str], *, reference: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Add ``rel`` = delivered bytes over those of the reference run of the same seed and
    ``keys`` (taken from ``reference``'s rows, default ``metrics``'s own)."""
    source = metrics if reference is None else reference
    ref = source[source["reference"]][["seed", *keys, "delivered_bytes"]]
    ref = ref.drop_duplicates(["seed", *keys]).rename(columns={"delivered_bytes": "ref_bytes"})
    out = metrics.merge(ref, on=["seed", *keys], how="left")
    out["rel"] = out["delivered_bytes"] / out["ref_bytes"]
    return out


def _select(m: pd.DataFrame, **where: Any) -> pd.DataFrame:
    part = m
    for k, v in where.items():
        part = part[part[k] == v]
    return part.sort_values("seed")


def values(m: pd.DataFrame, measure: str, **where: Any) -> dict[int, float]:
    """``measure`` per seed of the rows matching ``where`` (column = value)."""
    part = _select(m, **where)
    return {int(s): float(v) for s, v in zip(part["seed"], part[measure])}


def ordering(
    a: Mapping[int, float], b: Mapping[int, float], *, margin: float = 0.0
) -> dict[str, Any]:
    """Compare two per-seed measures paired by seed: is ``a - b > margin``?

    Returns the summaries of ``a``, ``b`` and the paired differences, and a ``verdict``:
    ``holds`` when the mean difference exceeds ``margin`` by more than two standard errors,
    ``reversed`` when it falls short of it by more than two standard errors, ``unresolved``
    otherwise (including fewer than two seeds). ``passed`` is ``verdict == "holds"``.
    """
    seeds = sorted(set(a) & set(b))
    diffs = [a[s] - b[s] for s in seeds if math.isfinite(a[s]) and math.isfinite(b[s])]
    verdict = "unresolved"
    if len(diffs) >= 2:
        mean = statistics.fmean(diffs)
        se = statistics.stdev(diffs) / math.sqrt(len(diffs))
        if mean - margin > 2 * se:
            verdict = "holds"
        elif mean - margin < -2 * se:
            verdict = "reversed"
    return {
        "a": summary(a[s] for s in seeds),
        "b": summary(b[s] for s in seeds),
        "a - b": summary(diffs),
        "verdict": verdict,
    }


_ORDER_RULE = "mean paired difference (a - b) over seeds {op} by more than 2 standard errors"


def _ordered(
    id: str,
    text: str,
    paper: Any,
    a: Mapping[int, float],
    b: Mapping[int, float],
    *,
    margin: float = 0.0,
    what: str = "",
) -> Claim:
    """A claim that per-seed ``a`` exceeds ``b`` (by ``margin``), decided by :func:`ordering`;
    ``what`` says what a and b are."""
    result = ordering(a, b, margin=margin)
    op = f"> {margin:g}" if margin else "> 0"
    return claim(
        id,
        text,
        paper=paper,
        ours=result,
        criterion=(what + "; " if what else "") + _ORDER_RULE.format(op=op),
        passed=result["verdict"] == "holds",
    )


def _all(
    id: str, text: str, paper: Any, parts: Mapping[str, dict[str, Any]], criterion: str
) -> Claim:
    """A claim made of several orderings that must all hold."""
    return claim(
        id,
        text,
        paper=paper,
        ours=dict(parts),
        criterion=criterion,
        passed=all(p["verdict"] == "holds" for p in parts.values()),
    )


def _within(
    id: str,
    text: str,
    paper: Any,
    named: Mapping[str, Mapping[int, float]],
    points: float,
    criterion: str,
) -> Claim:
    """A claim that two per-seed measures (``named``, two entries) lie within ``points`` of
    each other: ``points - |x - y|`` must exceed 0 by more than two standard errors."""
    (nx, x), (ny, y) = named.items()
    seeds = sorted(set(x) & set(y))
    gap = {s: abs(x[s] - y[s]) for s in seeds}
    res = ordering({s: points for s in seeds}, gap)
    return claim(
        id,
        text,
        paper=paper,
        ours={
            nx: summary(x[s] for s in seeds),
            ny: summary(y[s] for s in seeds),
            "|difference|": res["b"],
            "verdict": res["verdict"],
        },
        criterion=f"{criterion}; |difference| below {points:g} points: {points:g} - mean "
        "|difference| over seeds > 2 standard errors",
        passed=res["verdict"] == "holds",
    )


def _pct(x: float) -> float:
    return 100.0 * x


# --- claims -----------------------------------------------------------------------------------


def web_claims(m: pd.DataFrame) -> list[Claim]:
    """Claims of sections 4.3-4.5 (Figures 2-5 and Table 1) on the ``web`` part's metrics."""
    out: list[Claim] = []
    L90, L105 = _labels(LOADS)

    def f05(aqm: str, mode: str, load: str) -> dict[int, float]:
        return {
            s: _pct(v)
            for s, v in values(
                m, "f05", aqm_label=aqm, ecn_mode_label=mode, load_label=load
            ).items()
        }

    def nt(aqm: str, mode: str, load: str) -> dict[int, float]:
        return {
            s: _pct(v)
            for s, v in values(m, "nt", aqm_label=aqm, ecn_mode_label=mode, load_label=load).items()
        }

    def ref05(load: str) -> dict[int, float]:
        return {s: _pct(v) for s, v in values(m[m["reference"]], "f05", load_label=load).items()}

    fr = "% of completed responses within 0.5 s"
    out.append(
        _all(
            "load-90-better-than-105",
            "For every AQM and ECN setting the response-time profile at 90% load is better than at 105%",
            "Figures 2-5 (stated for RED, holds in every figure)",
            {
                f"{aqm} {mode}": ordering(f05(aqm, mode, L90), f05(aqm, mode, L105))
                for aqm in AQMS
                for mode in ECN_MODES
            },
            f"a = {fr} at 90%, b = at 105%; every one of the 12 orderings must hold (mean paired difference > 2 SE)",
        )
    )
    out.append(
        _all(
            "uncongested-best",
            "The uncongested network has the best response-time profile at both loads",
            "Figures 2-5",
            {
                f"{aqm} {mode} {load}": ordering(ref05(load), f05(aqm, mode, load))
                for aqm in AQMS
                for mode in ECN_MODES
                for load in (L90, L105)
            },
            f"a = {fr} on the uncongested 1 Gb/s link, b = with the AQM; all 24 must hold",
        )
    )
    for load in (L90, L105):
        out.append(
            _ordered(
                f"red-ecnplus-better-than-ecn-{load[:-1]}",
                f"RED: ECN+ improves response times over ECN at {load} load",
                "Figure 2: 'ECN+ indeed significantly improves the performance of RED', both loads",
                f05("RED", "ECN+", load),
                f05("RED", "ECN", load),
                what=f"a = {fr} with ECN+, b = with ECN",
            )
        )
    out.append(
        _all(
            "red-ecn-small-gain",
            "RED: ECN alone improves a little on no ECN",
            "Figure 2: 'ECN alone provides a small improvement'",
            {
                load: ordering(f05("RED", "ECN", load), f05("RED", "no ECN", load))
                for load in (L90, L105)
            },
            f"a = {fr} with ECN, b = without, at 90% and 105%",
        )
    )
    out.append(
        _ordered(
            "redstar-ecn-worse-than-none-90",
            "RED*: the fraction of responses within 0.5 s at 90% load is lower with ECN than without",
            {"ECN": "about 30%", "no ECN": "nearly 75%"},
            f05("RED*", "no ECN", L90),
            f05("RED*", "ECN", L90),
            what=f"a = {fr} without ECN, b = with ECN",
        )
    )
    out.append(
        _all(
            "redstar-ecnplus-better-than-none",
            "RED*: ECN+ improves response times over no ECN at both loads",
            "Figure 3",
            {
                load: ordering(f05("RED*", "ECN+", load), f05("RED*", "no ECN", load))
                for load in (L90, L105)
            },
            f"a = {fr} with ECN+, b = without ECN",
        )
    )
    out.append(
        _within(
            "redstar-ecnplus-near-uncongested-90",
            "RED* with ECN+ at 90% load comes very close to the uncongested profile",
            "Figure 3: 'very close to the idealized uncongested profile'",
            {"RED* ECN+": f05("RED*", "ECN+", L90), UNCONGESTED: ref05(L90)},
            5.0,
            fr,
        )
    )
    out.append(
        _all(
            "rem-ecn-better-than-none",
            "REM: ECN alone significantly improves REM's response times",
            "Figure 4",
            {
                load: ordering(f05("REM", "ECN", load), f05("REM", "no ECN", load))
                for load in (L90, L105)
            },
            f"a = {fr} with ECN, b = without, at 90% and 105%",
        )
    )
    out.append(
        _all(
            "pi-ecnplus-better-than-ecn-better-than-none",
            "PI: ECN improves on no ECN, and ECN+ improves on ECN",
            "Figure 5",
            {
                f"ECN vs none {load}": ordering(f05("PI", "ECN", load), f05("PI", "no ECN", load))
                for load in (L90, L105)
            }
            | {
                f"ECN+ vs ECN {load}": ordering(f05("PI", "ECN+", load), f05("PI", "ECN", load))
                for load in (L90, L105)
            },
            f"{fr}; all four orderings must hold",
        )
    )

    def gain(aqm: str, load: str, measure: Any = f05) -> dict[int, float]:
        plus, ecn = measure(aqm, "ECN+", load), measure(aqm, "ECN", load)
        return {s: plus[s] - ecn[s] for s in plus if s in ecn}

    out.append(
        _all(
            "ecnplus-gain-grows-with-load",
            "The benefit of ECN+ over ECN is larger at 105% than at 90% load, for every AQM",
            "Section 4.3.2: 'this result systematically holds for all schemes'",
            {aqm: ordering(gain(aqm, L105), gain(aqm, L90)) for aqm in AQMS},
            f"a = ECN+ minus ECN ({fr}) at 105%, b = the same at 90%; all four AQMs",
        )
    )
    spread = {}
    for mode in ("no ECN", "ECN+"):
        per = {aqm: f05(aqm, mode, L90) for aqm in AQMS}
        seeds = sorted(set.intersection(*(set(v) for v in per.values())))
        spread[mode] = {
            s: max(p[s] for p in per.values()) - min(p[s] for p in per.values()) for s in seeds
        }
    out.append(
        _ordered(
            "ecnplus-narrows-aqm-differences-90",
            "The differences between AQM schemes are much smaller with ECN+ than without ECN",
            "Section 4.5",
            spread["no ECN"],
            spread["ECN+"],
            what=f"a = spread (best - worst AQM) of {fr} at 90% without ECN, b = with ECN+",
        )
    )
    out.append(
        _all(
            "ecnplus-throughput-not-below-ecn",
            "ECN+ throughput is at least ECN's for every AQM and load",
            "Table 1: ECN+ - ECN from +0.19 (PI 90%) to +19.89 (RED* 105%) points",
            {
                f"{aqm} {load}": ordering(nt(aqm, "ECN+", load), nt(aqm, "ECN", load), margin=-0.5)
                for aqm in AQMS
                for load in (L90, L105)
            },
            "a = normalized throughput (%) with ECN+, b = with ECN; 'at least' read as a - b > -0.5 points; all 8",
        )
    )
    out.append(
        _ordered(
            "redstar-ecnplus-throughput-gain-grows",
            "ECN+ improves RED* throughput by more at 105% than at 90%",
            {"90%": round(79.29 - 73.24, 2), "105%": round(96.51 - 76.62, 2)},
            gain("RED*", L105, nt),
            gain("RED*", L90, nt),
            what="a = ECN+ minus ECN normalized throughput (points) at 105%, b = at 90%",
        )
    )
    out.append(
        _all(
            "redstar-largest-throughput-gain",
            "The ECN+ throughput gain is largest for RED*",
            "Table 1: RED* +6.05 / +19.89 points, the others +0.19 to +5.31",
            {
                f"RED* vs {aqm} {load}": ordering(gain("RED*", load, nt), gain(aqm, load, nt))
                for aqm in AQMS
                if aqm != "RED*"
                for load in (L90, L105)
            },
            "a = RED*'s ECN+ minus ECN throughput (points), b = another AQM's; all 6",
        )
    )
    return out


def threshold_claims(web: pd.DataFrame, thr: pd.DataFrame) -> list[Claim]:
    """Section 5 (Figure 6 and the 105% text): threshold with ECN+ against PI without ECN."""
    out: list[Claim] = []
    L90, L105 = _labels(LOADS)

    def pi(measure: str, load: str) -> dict[int, float]:
        return {
            s: _pct(v)
            for s, v in values(
                web, measure, aqm_label="PI", ecn_mode_label="no ECN", load_label=load
            ).items()
        }

    def th(measure: str, load: str) -> dict[int, float]:
        return {s: _pct(v) for s, v in values(thr, measure, load_label=load).items()}

    for load in (L90, L105):
        out.append(
            _ordered(
                f"threshold-ecnplus-faster-than-pi-{load[:-1]}",
                f"The threshold marker with ECN+ has a better response-time profile than PI without ECN at {load} load",
                "Figure 6 (90%); section 5.2.3 (105%, 'by even a larger margin')",
                th("f05", load),
                pi("f05", load),
                what="a = % of completed responses within 0.5 s with threshold + ECN+, b = PI without ECN",
            )
        )
    paper = {L90: {"threshold": 85.05, "PI": 86.09}, L105: {"threshold": 97.37, "PI": 99.89}}
    for load in (L90, L105):
        a, b = th("nt", load), pi("nt", load)
        out.append(
            _within(
                f"threshold-pi-throughput-similar-{load[:-1]}",
                f"At {load} load the threshold marker with ECN+ and PI without ECN have about the "
                "same throughput",
                paper[load],
                {"threshold": a, "PI": b},
                3.0,
                "normalized throughput (%) (paper: differences of 1.04 and 2.52 points)",
            )
        )
    gain = {
        L: {s: th("f05", L)[s] - pi("f05", L)[s] for s in th("f05", L) if s in pi("f05", L)}
        for L in (L90, L105)
    }
    out.append(
        _ordered(
            "threshold-margin-grows-with-load",
            "The threshold marker with ECN+ beats PI without ECN by a larger margin at 105% than at 90%",
            "Section 5.2.3",
            gain[L105],
            gain[L90],
            what="a = threshold minus PI (% within 0.5 s) at 105%, b = at 90%",
        )
    )
    return out


def deployment_claims(m: pd.DataFrame, pooled: pd.DataFrame) -> list[Claim]:
    """Section 6 (Figure 10): ECN+ servers, a fraction of ECN clients, RED* at 98% load."""
    out: list[Claim] = []
    fr = "% of completed responses within 0.5 s"
    runs = m[~m["reference"]]

    def cls(frac: str, ecn: bool) -> dict[int, float]:
        return {s: _pct(v) for s, v in values(runs, "f05", fraction_label=frac, ecn=ecn).items()}

    out.append(
        _all(
            "deployment-ecn-clients-better",
            "At every deployment level ECN clients get better response times than non-ECN clients",
            "Figure 10 (5%, 50%, 95% ECN clients)",
            {f: ordering(cls(f, True), cls(f, False)) for f in _fraction_labels()},
            f"a = {fr} of ECN clients, b = of non-ECN clients; all three fractions",
        )
    )
    ref = {s: _pct(v) for s, v in values(pooled[pooled["reference"]], "f05").items()}
    out.append(
        _within(
            "deployment-ecn-clients-near-ideal-50",
            "With 50% ECN clients the ECN clients still get nearly ideal response times",
            "Figure 10",
            {"ECN clients": cls("50%", True), UNCONGESTED: ref},
            5.0,
            fr,
        )
    )
    f5, f50, f95 = _fraction_labels()
    out.append(
        _all(
            "deployment-non-ecn-degrade-gradually",
            "Non-ECN clients degrade as more clients adopt ECN, most at 95%",
            "Figure 10: slight degradation from 5% to 50%, more pronounced at 95%",
            {
                "5% vs 50%": ordering(cls(f5, False), cls(f50, False)),
                "50% vs 95%": ordering(cls(f50, False), cls(f95, False)),
            },
            f"a = {fr} of non-ECN clients at the lower fraction, b = at the higher one",
        )
    )
    return out


def testbed_claims(m: pd.DataFrame) -> list[Claim]:
    """Section 7 (and seed 003): mean response times and normalized throughput."""
    runs = m[~m["reference"]]

    def v(measure: str, mode: str, scale: float = 1.0) -> dict[int, float]:
        return {s: scale * x for s, x in values(runs, measure, ecn_mode_label=mode).items()}

    return [
        _all(
            "testbed-mean-response-order",
            "Testbed: mean response time no ECN > ECN > ECN+",
            {"no ECN": 26.0, "ECN": 4.5, "ECN+": 0.5},
            {
                "no ECN vs ECN": ordering(v("mean_rt_s", "no ECN"), v("mean_rt_s", "ECN")),
                "ECN vs ECN+": ordering(v("mean_rt_s", "ECN"), v("mean_rt_s", "ECN+")),
            },
            "mean response time (s) of completed responses; both orderings must hold",
        ),
        _all(
            "testbed-throughput-order",
            "Testbed: normalized throughput no ECN < ECN < ECN+",
            {"no ECN": 44.0, "ECN": 56.0, "ECN+": 99.0},
            {
                "ECN vs no ECN": ordering(v("nt", "ECN", 100), v("nt", "no ECN", 100)),
                "ECN+ vs ECN": ordering(v("nt", "ECN+", 100), v("nt", "ECN", 100)),
            },
            "normalized throughput (% of 10 Mb/s); both orderings must hold",
        ),
        _all(
            "testbed-tails",
            "Testbed (Fig. 12): RED* without ECN has the heaviest tail of response times and ECN+ "
            "the lightest",
            "Figure 12: no ECN heaviest; ECN+ 'avoids a large number of unnecessary timeouts'",
            {
                "no ECN vs ECN": ordering(v("tail", "no ECN", 100), v("tail", "ECN", 100)),
                "ECN vs ECN+": ordering(v("tail", "ECN", 100), v("tail", "ECN+", 100)),
            },
            f"% of completed responses slower than {TAIL_S:g} s (the initial RTO); both orderings",
        ),
        _ordered(
            "testbed-ecnplus-mean-response-tenfold",
            "Testbed: ECN+ cuts the mean response time of ECN by nearly an order of magnitude",
            {"ECN / ECN+": 9.0},
            {s: math.log10(x) for s, x in v("mean_rt_s", "ECN").items()},
            {s: math.log10(x) + 0.5 for s, x in v("mean_rt_s", "ECN+").items()},
            what="read as a ratio ECN / ECN+ above 10^0.5 = 3.2 (a = log10 ECN, b = log10 ECN+ + 0.5)",
        ),
    ]


# --- tables -----------------------------------------------------------------------------------

PAPER_TABLE1 = {
    ("90%", "RED", "ECN"): 84.91, ("90%", "RED", "ECN+"): 85.11,
    ("90%", "RED*", "ECN"): 73.24, ("90%", "RED*", "ECN+"): 79.29,
    ("90%", "REM", "ECN"): 78.28, ("90%", "REM", "ECN+"): 78.63,
    ("90%", "PI", "ECN"): 86.37, ("90%", "PI", "ECN+"): 86.56,
    ("105%", "RED", "ECN"): 94.65, ("105%", "RED", "ECN+"): 95.02,
    ("105%", "RED*", "ECN"): 76.62, ("105%", "RED*", "ECN+"): 96.51,
    ("105%", "REM", "ECN"): 94.42, ("105%", "REM", "ECN+"): 99.73,
    ("105%", "PI", "ECN"): 99.76, ("105%", "PI", "ECN+"): 99.89,
}  # fmt: skip
"""Seed 000 Table 1: normalized throughput (%)."""


def _mean_sd(vals: Sequence[float]) -> tuple[float, float]:
    arr = np.asarray([x for x in vals if math.isfinite(x)], dtype=float)
    if len(arr) == 0:
        return math.nan, math.nan
    return float(arr.mean()), float(arr.std(ddof=1)) if len(arr) > 1 else math.nan


def table1(m: pd.DataFrame) -> pd.DataFrame:
    """Table 1 with ours beside the paper's, every AQM and ECN mode (no ECN included)."""
    rows = []
    for load in _labels(LOADS):
        for aqm in AQMS:
            for mode in ECN_MODES:
                part = _select(
                    m[~m["reference"]], load_label=load, aqm_label=aqm, ecn_mode_label=mode
                )
                nt_mean, nt_sd = _mean_sd(100 * part["nt"])
                rel_mean, rel_sd = _mean_sd(100 * part["rel"])
                rows.append(
                    {
                        "load": load,
                        "aqm": aqm,
                        "ecn": mode,
                        "paper (%)": PAPER_TABLE1.get((load, aqm, mode), math.nan),
                        "ours (% of capacity)": nt_mean,
                        "sd": nt_sd,
                        "ours (% of uncongested)": rel_mean,
                        "sd (uncongested)": rel_sd,
                        "seeds": len(part),
                    }
                )
    return pd.DataFrame(rows).set_index(["load", "aqm", "ecn"]).round(2)


def fig6_table(web: pd.DataFrame, thr: pd.DataFrame) -> pd.DataFrame:
    paper = {("90%", "threshold, ECN+"): 85.05, ("90%", "PI, no ECN"): 86.09,
             ("105%", "threshold, ECN+"): 97.37, ("105%", "PI, no ECN"): 99.89}  # fmt: skip
    rows = []
    for load in _labels(LOADS):
        for name, part in (
            ("threshold, ECN+", _select(thr, load_label=load)),
            (
                "PI, no ECN",
                _select(
                    web[~web["reference"]], load_label=load, aqm_label="PI", ecn_mode_label="no ECN"
                ),
            ),
        ):
            nt_mean, nt_sd = _mean_sd(100 * part["nt"])
            f_mean, f_sd = _mean_sd(100 * part["f05"])
            rows.append(
                {
                    "load": load,
                    "scheme": name,
                    "paper throughput (%)": paper[(load, name)],
                    "ours throughput (%)": nt_mean,
                    "sd": nt_sd,
                    "ours within 0.5 s (%)": f_mean,
                    "sd (0.5 s)": f_sd,
                    "seeds": len(part),
                }
            )
    return pd.DataFrame(rows).set_index(["load", "scheme"]).round(2)


def testbed_table(m: pd.DataFrame) -> pd.DataFrame:
    """Section 7's numbers beside ours: mean response time (all exchanges, and the first
    exchange of each connection, which carries the handshake) and normalized throughput."""
    paper = {"no ECN": (26.0, 44.0), "ECN": (4.5, 56.0), "ECN+": (0.5, 99.0)}
    groups = [
        (f"RED*, {mode}", _select(m[~m["reference"]], ecn_mode_label=mode), paper[mode])
        for mode in ECN_MODES
    ]
    groups.append(("uncongested (100 Mb/s)", m[m["reference"]], (math.nan, math.nan)))
    rows = []
    for name, part, (rt_paper, nt_paper) in groups:
        rt = _mean_sd(part["mean_rt_s"])
        first = _mean_sd(part["mean_rt_first_s"])
        tail = _mean_sd(100 * part["tail"])
        nt = _mean_sd(100 * part["nt"])
        rows.append(
            {
                "scenario": name,
                "paper mean response (s)": rt_paper,
                "ours mean response (s)": rt[0],
                "sd (s)": rt[1],
                "ours mean, first exchange of a connection (s)": first[0],
                "sd first (s)": first[1],
                f"ours slower than {TAIL_S:g} s (%)": tail[0],
                "sd tail (%)": tail[1],
                "paper throughput (%)": nt_paper,
                "ours throughput (% of the bottleneck)": nt[0],
                "sd (%)": nt[1],
                "seeds": len(part),
            }
        )
    return pd.DataFrame(rows).set_index("scenario").round(3)


def response_table(m: pd.DataFrame) -> pd.DataFrame:
    """Per load, AQM and ECN mode (and the uncongested reference): F(0.5 s) and the mean
    response time, mean and sd over seeds."""
    rows = []
    for load in _labels(LOADS):
        groups = [
            (
                aqm,
                mode,
                _select(m[~m["reference"]], load_label=load, aqm_label=aqm, ecn_mode_label=mode),
            )
            for aqm in AQMS
            for mode in ECN_MODES
        ]
        groups.append((UNCONGESTED, "", _select(m[m["reference"]], load_label=load)))
        for aqm, mode, part in groups:
            f05, f05_sd = _mean_sd(100 * part["f05"])
            rt, rt_sd = _mean_sd(part["mean_rt_s"])
            rows.append(
                {
                    "load": load, "aqm": aqm, "ecn": mode,
                    "within 0.5 s (%)": f05, "sd (%)": f05_sd,
                    "mean response (s)": rt, "sd (s)": rt_sd, "seeds": len(part),
                }
            )  # fmt: skip
    return pd.DataFrame(rows).set_index(["load", "aqm", "ecn"]).round(3)


def deployment_table(m: pd.DataFrame, pooled: pd.DataFrame) -> pd.DataFrame:
    """Figure 10 in numbers: F(0.5 s) per fraction of ECN clients and client class."""
    rows = []
    runs = m[~m["reference"]]
    for frac in _fraction_labels():
        for cls, ecn in (("ECN", True), ("non-ECN", False)):
            part = _select(runs, fraction_label=frac, ecn=ecn)
            f05, sd = _mean_sd(100 * part["f05"])
            rows.append({"ECN clients": frac, "class": cls, "within 0.5 s (%)": f05, "sd (%)": sd})
    ref = pooled[pooled["reference"]]
    f05, sd = _mean_sd(100 * ref["f05"])
    rows.append({"ECN clients": UNCONGESTED, "class": "", "within 0.5 s (%)": f05, "sd (%)": sd})
    return pd.DataFrame(rows).set_index(["ECN clients", "class"]).round(3)


def _rounded(m: pd.DataFrame) -> pd.DataFrame:
    keep = [c for c in m.columns if c not in ("run_id",)]
    return m[keep].round(4)


# --- figures ----------------------------------------------------------------------------------


def cdf_curve(con: duckdb.DuckDBPyConnection, where: str) -> pd.DataFrame:
    """Response-time CDF up to 2 s of the completed exchanges matching ``where`` (pooled over
    seeds), in bins of 5 ms computed in DuckDB: columns ``x_s`` (bin end) and ``p``."""
    n = con.execute(f"SELECT count(*) FROM exchanges WHERE completed AND ({where})").fetchone()
    total = int(n[0]) if n else 0
    if total == 0:
        return pd.DataFrame({"x_s": [], "p": []})
    hist = con.execute(
        f"""SELECT least(floor(response_time_s / {CDF_BIN_S}), {int(CDF_MAX_S / CDF_BIN_S)})::BIGINT AS b,
                   count(*) AS n
            FROM exchanges WHERE completed AND ({where}) GROUP BY b ORDER BY b"""
    ).df()
    bins = np.zeros(int(CDF_MAX_S / CDF_BIN_S) + 1)
    bins[hist["b"].to_numpy()] = hist["n"].to_numpy()
    cum = np.cumsum(bins[:-1]) / total
    x = (np.arange(len(cum)) + 1) * CDF_BIN_S
    return pd.DataFrame({"x_s": np.r_[0.0, x], "p": np.r_[0.0, cum]})


_REFERENCE_STYLE = {"color": "black", "linestyle": "--", "linewidth": 1.4}


def cdf_figure(
    title: str,
    curves: Mapping[str, Mapping[str, pd.DataFrame]],
    references: Mapping[str, pd.DataFrame],
    styles: Mapping[str, Mapping[str, Any]] | None = None,
) -> Figure:
    """One panel per key of ``curves`` (a load), one line per inner key, the reference dashed;
    response time in ms on x (to 2 s), cumulative % on y, as seed 000 draws them."""
    fig = Figure(figsize=(4.8 * len(curves), 3.6), layout="constrained")
    axes = fig.subplots(1, len(curves), squeeze=False)[0]
    for ax, (panel, lines) in zip(axes, curves.items()):
        for label, c in lines.items():
            if len(c):
                ax.plot(1000 * c["x_s"], 100 * c["p"], label=label, **(styles or {}).get(label, {}))
        ref = references.get(panel)
        if ref is not None and len(ref):
            ax.plot(1000 * ref["x_s"], 100 * ref["p"], label=UNCONGESTED, **_REFERENCE_STYLE)
        ax.set_xlim(0, 1000 * CDF_MAX_S)
        ax.set_ylim(0, 100)
        ax.grid(True, alpha=0.3)
        ax.set_xlabel("response time (ms)")
        ax.set_ylabel("cumulative probability (%)")
        ax.set_title(f"{title}, {panel} load" if panel else title)
        ax.legend(fontsize="small", loc="lower right")
    return fig


def testbed_figure(con: duckdb.DuckDBPyConnection, *, complementary: bool) -> Figure:
    """Figures 11 (CDF to 2 s) and 12 (log-log CCDF) of the testbed, seeds pooled."""
    data = con.execute(
        "SELECT reference, ecn_mode_label, response_time_s, completed FROM exchanges"
    ).df()
    fig = Figure(figsize=(5.6, 4.0), layout="constrained")
    ax = fig.subplots()
    groups = [
        (f"RED*, {mode}", data[~data["reference"] & (data["ecn_mode_label"] == mode)], {})
        for mode in ECN_MODES
    ]
    groups.append(("uncongested network (100 Mb/s)", data[data["reference"]], _REFERENCE_STYLE))
    for label, part, style in groups:
        curve = analysis.response_time_cdf(part, complementary=complementary)
        if curve.empty:
            continue
        y = curve["p"] if complementary else 100 * curve["p"]
        ax.step(1000 * curve["response_time_s"], y, where="post", label=label, **style)
    if complementary:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylabel("P(response time > x)")
    else:
        ax.set_xlim(0, 1000 * CDF_MAX_S)
        ax.set_ylim(0, 100)
        ax.set_ylabel("cumulative probability (%)")
    ax.set_xlabel("response time (ms)")
    ax.grid(True, which="both" if complementary else "major", alpha=0.3)
    ax.legend(fontsize="small", loc="lower left" if complementary else "lower right")
    return fig
