"""Which part of ECN++ moves the response times of seed 000's web traffic at 105% load.

The ``ecn-plus-plus`` part of ``ecnlab reproduce ecn-plus`` runs ECN++ (the generalized-ECN
draft on AccECN hosts) beside the seed's ECN+. This script takes its scenario for one seed and
turns ECN++'s parts on one at a time, printing the share of responses done within 0.5 and 3 s
(Kaplan-Meier, exchanges started after the warm-up), the mean restricted to 60 s and what the
down bottleneck did. docs/reproduction/ecn-plus.md ("ECN++") gives its output for seed 1.

    python examples/ecnpp_ablation.py [--seed 1] [--aqms RED,RED*,REM,PI] [--jobs 2]

Each run simulates 600 s of a 100 Mb/s bottleneck (30-50 s of wall time here).
"""

from __future__ import annotations

import argparse
import copy
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from ecnlab import analysis
from ecnlab._run import run
from ecnlab.reproduce import get_study, part_sweeps

ECNPP_SWITCHES = ("ecn_plus_plus", "ect_syn", "ect_pure_acks", "ect_fins", "ect_retransmissions")
VARIANTS = {
    "ECN++": {},
    "ECN++ with the seed's SYN-ACK": {"ecn_plus": "seed"},
    "AccECN, seed's ECN+": {"drop": ECNPP_SWITCHES, "ecn_plus": "seed"},
    "AccECN, seed's ECN+, ECT FINs and pure ACKs": {
        "drop": ECNPP_SWITCHES, "ecn_plus": "seed", "ect_fins": True, "ect_pure_acks": True,
    },
    "RFC 3168, seed's ECN+, ECT retransmissions": {
        "drop": (*ECNPP_SWITCHES, "accecn_option"), "ecn_feedback": "rfc3168",
        "ecn_plus": "seed", "ect_retransmissions": True,
    },
}  # fmt: skip
"""Each variant as changes to the ECN++ part's ``[tcp]``: fields removed, then fields set."""


def scenario(aqm: str, seed: int, variant: str) -> dict[str, Any]:
    (spec,) = [
        r
        for r in part_sweeps(get_study("ecn-plus"), "quick", at="cap")["ecn-plus-plus"].runs()
        if r.seed == seed and r.labels["aqm"] == aqm
    ]
    sc = copy.deepcopy(spec.scenario)
    change = dict(VARIANTS[variant])
    for field in change.pop("drop", ()):
        sc["tcp"].pop(field, None)
    sc["tcp"].update(change)
    return sc


def measure(job: tuple[str, int, str]) -> dict[str, Any]:
    aqm, seed, variant = job
    sc = scenario(aqm, seed, variant)
    res = run(sc, seed, progress=False)
    ex = res.exchanges.to_pandas()
    ex = ex[ex["start_s"] >= sc["warmup_s"]]
    s = analysis.response_time_summary(ex, at_s=(0.5, 3.0), horizon_s=60.0).iloc[0]
    summary = res.summary
    return {
        "aqm": aqm, "variant": variant, "within 0.5 s %": 100 * s["F_0.5"],
        "within 3 s %": 100 * s["F_3"], "mean s": s["mean_s"], "unfinished": int(s["unfinished"]),
        "utilization %": 100 * summary["utilization_down"],
        "loss %": 100 * summary["loss_rate_down"], "marked %": 100 * summary["mark_rate_down"],
        "mean queue pkts": summary["mean_queue_pkts_down"],
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--aqms", default="RED,RED*,REM,PI")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    jobs = [(a, args.seed, v) for a in args.aqms.split(",") for v in VARIANTS]
    with ProcessPoolExecutor(args.jobs) as pool:
        for row in pool.map(measure, jobs):
            print(" | ".join(f"{v:.2f}" if isinstance(v, float) else str(v) for v in row.values()))


if __name__ == "__main__":
    main()
