"""The seed studies' central comparisons run in ns-2.35 and in ecnlab (``ecnlab crosscheck``).

Each comparison is a small set of scenarios built by the study's own code, each run in both
simulators over several seeds; the summary prints, per measure, the mean over seeds with a
two-sided 95% Student-t interval for ns-2 and for ecnlab, measured the same way on both sides
(``ecnlab.crosscheck.compare.measures``). The write-ups quote these tables
(docs/reproduction/heterogeneous.md, dcn.md and ecn-plus.md, "ns-2").

    python tests/crosscheck/seed_comparisons.py heterogeneous OUT [--seeds 5] [--set PATH=VALUE ...]
    python tests/crosscheck/seed_comparisons.py dcn OUT [--seeds 1] [--cases drop-tail-105 ...]
    python tests/crosscheck/seed_comparisons.py ecn-plus OUT [--seeds 3] [--cases RED*-ECN-90 ...]

OUT keeps every run's folder (Tcl script, both sides' tables; ns-2's packet trace is deleted
once read); a rerun resumes. ``--set``
overrides a field of every case's scenario (as ``ecnlab crosscheck ns2 -s``), for instance
``tcp.ecn_response=rfc3168`` to give ecnlab RFC 3168's ECN response instead of ns-2's, which
the heterogeneous reproduction uses.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ecnlab.crosscheck.run import crosscheck_ns2, normalized
from ecnlab.reproduce.verdict import t_interval

KEPT = (
    "utilization_down",
    "goodput_mbps",
    "retx_share",
    "loss_rate_down",
    "mark_rate_down",
    "timeouts_per_flow",
    "mean_queue_pkts_down",
    "jain_bulk",
    "response_time_median_s",
    "response_time_mean_s",
    "completed_share",
    "exchanges_started",
    "response_within_0.5s_share",
)


def heterogeneous_cases() -> dict[str, dict[str, Any]]:
    """Seed 001, Figs. 9-10: 120 flows, max_p 0.8, max_th 30; RED (drops) against ECN."""
    from ecnlab.reproduce import heterogeneous as het

    cases = {}
    for scheme in ("red", "ecn"):
        sc = het.base_scenario(120, het.red_aqm(0.8, het.MAX_TH_PKTS, ecn=scheme != "red"))
        sc["tcp"]["ecn"] = scheme != "red"
        if scheme == "red":
            del sc["tcp"]["ecn_response"]  # ns-2's ECN response needs ECN
        cases[scheme] = sc
    return cases


def _study_scenario(
    path: Path, warmup_s: float, window_s: float, *overrides: str
) -> dict[str, Any]:
    """A study's scenario file with its warm-up and measurement window, normalized."""
    return normalized(
        str(path), [f"duration_s={warmup_s + window_s}", f"warmup_s={warmup_s}", *overrides]
    )


def dcn_cases() -> dict[str, dict[str, Any]]:
    """Seed 004, Table 1: drop-tail and PI/ECN (q_ref 24) at 90% and 105% of PackMime HTTP,
    the quick mode's warm-up, window and calibration (ns-2 simulated the first 306 s of a
    full-mode run, 900 s, in 6 CPU-minutes and a 1.7 GB trace here)."""
    from ecnlab.reproduce import dcn

    queues = {
        "drop-tail": ({"limit_pkts": 240}, False),
        "PI-ECN": (
            {"limit_pkts": dcn.AQM_LIMIT_PKTS, "aqm": {"kind": "pi", "q_ref_pkts": 24, "ecn": True}},
            True,
        ),
    }
    cases = {}
    for load in (90, 105):
        for name, (queue, ecn) in queues.items():
            sc = _study_scenario(
                dcn.DATA / "http.toml",
                dcn.WARMUP_S["http"],
                dcn.WINDOW_S["quick"]["http"],
                f"load.calibration={dcn.CALIBRATION['quick']['http']}",
                f"load.offered_load_mbps={load}",
                f"tcp.ecn={'true' if ecn else 'false'}",
            )
            sc["topology"]["bottleneck"]["queue"] = queue
            cases[f"{name}-{load}"] = sc
    return cases


ECN_PLUS_AQMS = ("RED*", "REM")
"""Seed 000's central comparison (RED*: Fig. 3 and Table 1) and the AQM whose reversed claims
the write-up traces to packet-mode price counting (REM)."""


def ecn_plus_cases() -> dict[str, dict[str, Any]]:
    """Seed 000, section 4: web sessions at 90% and 105% through RED* and REM with no ECN, ECN
    and ECN+, the quick mode's warm-up, window and calibration. Two changes make the study's
    scenario translatable, applied on both sides: one page per site (ns-2's WebTraf draws a
    server for every page) and ECN+ as ``rfc5562`` (FullTcp's ``ecn_syn_`` with
    ``ecn_syn_wait_ 0``: the server starts with one segment after a marked SYN-ACK; the study's
    ``seed`` client ignores the mark, which no ns-2 client does). REM with ECN marks at
    departure, as ns-2.35's REM does (``mark_on_dequeue``; the study marks at arrival)."""
    from ecnlab.reproduce import ecn_plus as ep

    cases = {}
    for load in ep.LOADS:
        for aqm in ECN_PLUS_AQMS:
            for mode in ep.ECN_MODES:
                ecn = mode != "no ECN"
                sc = _study_scenario(
                    ep.DATA / "web-sessions.toml",
                    ep.WARMUP_S["web"],
                    ep.WINDOW_S["quick"]["web"],
                    f"load.offered_load_mbps={float(load.rstrip('%'))}",
                    f"tcp.ecn={'true' if ecn else 'false'}",
                    f"tcp.ecn_plus={'rfc5562' if mode == 'ECN+' else 'off'}",
                )
                queue_aqm = dict(ep.AQMS[aqm], ecn=ecn)
                if aqm == "REM" and ecn:
                    queue_aqm["mark_on_dequeue"] = True
                sc["topology"]["bottleneck"]["queue"]["aqm"] = queue_aqm
                sc["workloads"][0]["pages_per_site"] = {"dist": "constant", "value": 1}
                cases[f"{aqm}-{mode.replace(' ', '-')}-{load.rstrip('%')}"] = sc
    return cases


def _deficit(measure: Callable[[dict[str, float]], float]) -> Callable[..., float]:
    return lambda red, ecn: 1 - measure(red) / measure(ecn)


def _seed_goodput(m: dict[str, float]) -> float:
    # The seed's goodput: data arriving at the receivers without retransmissions, as the
    # link's utilisation times the share of sent bytes that were not retransmissions.
    return m["utilization_down"] * (1 - m["retx_share"])


DERIVED = {
    "heterogeneous": {
        "Fig. 9: 1 - RED/ECN goodput without retransmissions (paper 0.15)": (
            ("red", "ecn"),
            _deficit(_seed_goodput),
        ),
        "Fig. 10: 1 - RED/ECN throughput (paper: slightly lower)": (
            ("red", "ecn"),
            _deficit(lambda m: m["utilization_down"]),
        ),
    },
    "dcn": {},
    "ecn-plus": {},
}
CASES = {"heterogeneous": heterogeneous_cases, "dcn": dcn_cases, "ecn-plus": ecn_plus_cases}


def run(
    study: str,
    out: Path,
    seeds: int,
    only: list[str] | None = None,
    overrides: list[str] | None = None,
) -> dict[str, dict[int, dict[str, dict[str, float]]]]:
    """Every case (or those in ``only``) and seed in both simulators, with ``overrides``
    (``PATH=VALUE``) applied to every scenario: ``{case: {seed: {side: measures}}}``."""
    results: dict[str, dict[int, dict[str, dict[str, float]]]] = {}
    cases = CASES[study]()
    unknown = sorted(set(only or ()) - set(cases))
    if unknown:
        raise SystemExit(f"unknown cases {unknown}; {study} has {sorted(cases)}")
    for name, scenario in cases.items():
        if only and name not in only:
            continue
        for seed in range(1, seeds + 1):
            folder = out / f"{name}-{seed}"
            if not (folder / "measures.json").exists():
                crosscheck_ns2(scenario, seed, folder, overrides or (), progress=False)
                # ns-2's packet trace (GBs for a web run) is in the folder's tables now
                (folder / "ns2" / "bottleneck.tr").unlink()
            m = json.loads((folder / "measures.json").read_text())
            results.setdefault(name, {})[seed] = {"ns2": m["ns2"], "ecnlab": m["ecnlab"]}
            print(f"{name} seed {seed}: done", flush=True)
    return results


def _interval(values: list[float]) -> str:
    mean, low, high = t_interval(values, 0.95)
    if len(values) < 2:
        return f"{mean:.4g} (1 seed)"
    return f"{mean:.4g} [{low:.4g}, {high:.4g}]"


def summary(study: str, results: dict[str, dict[int, dict[str, dict[str, float]]]]) -> str:
    """A Markdown table: per case and measure, ns-2 and ecnlab (mean [95% interval])."""
    lines = ["| case | measure | ns-2 | ecnlab |", "|---|---|---|---|"]
    for name, by_seed in results.items():
        for key in KEPT:
            sides = {
                s: [v[s][key] for v in by_seed.values() if v[s].get(key) is not None]
                for s in ("ns2", "ecnlab")
            }
            if all(sides.values()) and all(math.isfinite(x) for x in sides["ns2"]):
                row = f"| {name} | {key} | {_interval(sides['ns2'])} | {_interval(sides['ecnlab'])} |"
                lines.append(row)
    for label, ((a, b), f) in DERIVED[study].items():
        if a not in results or b not in results:
            continue
        seeds = sorted(set(results[a]) & set(results[b]))
        cells = [
            _interval([f(results[a][s][side], results[b][s][side]) for s in seeds])
            for side in ("ns2", "ecnlab")
        ]
        lines.append(f"| {a} vs {b} | {label} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("study", choices=sorted(CASES))
    parser.add_argument("out", type=Path)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--cases", nargs="+", help="run only these cases (default: all)")
    parser.add_argument(
        "--set", dest="overrides", action="append", metavar="PATH=VALUE", default=[],
        help="override a field of every case's scenario (repeatable)",
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results = run(args.study, args.out, args.seeds, args.cases, args.overrides)
    print(summary(args.study, results))


if __name__ == "__main__":
    main()
