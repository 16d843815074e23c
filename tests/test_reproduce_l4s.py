"""The L4S coexistence study: its setup, its claims on synthetic runs with and without the
papers' effects, and its measures on a few short real runs."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from ecnlab.reproduce import SeedPlan, get_study, l4s, part_sweeps, reproduce

CLAIMS = {c.id: c for c in l4s.CLAIMS}
SEEDS = 5


# ----- setup ------------------------------------------------------------------------------------


def test_quick_is_a_subset_of_full() -> None:
    quick, full = l4s.grids("quick"), l4s.grids("full")
    for key in ("rates_mbps", "rtts_ms", "mixes", "pi2_rtts_ms"):
        assert set(quick[key]) <= set(full[key]), key
    # The PI2 paper's testbed grid: 4-200 Mb/s, 5-100 ms.
    assert min(full["rates_mbps"]) == 4 and max(full["rates_mbps"]) == 200
    assert min(full["rtts_ms"]) == 5 and max(full["rtts_ms"]) == 100


def test_parts_pit_cubic_against_prague_under_dualpi2_and_one_ecn_queue() -> None:
    parts = part_sweeps(get_study("l4s"), "quick")
    runs = parts["coexist"].runs()
    g = l4s.grids("quick")
    assert len(runs) == 2 * 2 * len(g["rates_mbps"]) * len(g["rtts_ms"]) * 3
    kinds, controls = set(), set()
    for r in runs:
        sc = r.scenario
        classic, scalable = sc["workloads"]
        assert classic["tcp"] == {"congestion_control": "cubic", "ecn": False}
        controls.add(scalable["tcp"]["congestion_control"])
        # ECT(1): the classifier's L4S identifier
        assert scalable["tcp"].get("ect_codepoint", "ect1") == "ect1" and scalable["tcp"]["ecn"]
        assert classic["flows"] == scalable["flows"] == 1
        aqm = sc["topology"]["bottleneck"]["queue"]["aqm"]
        kinds.add(aqm["kind"])
        if aqm["kind"] == "pie":
            assert aqm["ecn"] is True
        # equal base RTTs: both flows cross the same bottleneck, no per-flow delay
        assert sc["topology"]["bottleneck"]["delay_ms"] * 2 in g["rtts_ms"]
    assert kinds == {"dualpi2", "pie"} and controls == {"dctcp", "prague"}
    mix = parts["mix"].runs()
    counts = {tuple(w["flows"] for w in r.scenario["workloads"]) for r in mix}
    assert counts == {l4s._mix_counts(m) for m in g["mixes"]}
    for r in mix:
        n = sum(w["flows"] for w in r.scenario["workloads"])
        assert r.scenario["topology"]["clients"] == r.scenario["topology"]["servers"] == n


# ----- claims on synthetic runs -----------------------------------------------------------------


def _rows(part: str, configs: list[dict[str, Any]], values: Callable[[dict, int], dict]) -> list:
    rows = []
    for cfg in configs:
        for seed in range(1, SEEDS + 1):
            rows.append({"seed": seed, **cfg, **values(cfg, seed)})
    return rows


def paper_world(**effects: Any) -> dict[str, pd.DataFrame]:
    """Per-run measures as the papers describe them; ``effects`` turn one off."""
    g = l4s.grids("quick")
    e = {
        "coupled_log2": 0.0,  # rate balance under DualPI2
        "single_log2": -4.0,  # starvation in one ECN queue
        "l_delay": 0.2,
        "l_p99": 0.9,
        "drops": 0.0,
        "c_delay": 15.0,
        "pi2_util": 0.0,  # PI2 minus PIE
        "pi2_sd": 1.0,  # PI2 over PIE
        **effects,
    }
    rng = np.random.default_rng(7)

    def noise(scale: float) -> float:
        return float(rng.normal(0, scale))

    def coexist(cfg: dict, seed: int) -> dict:
        coupled = cfg["aqm"] == "dualpi2"
        lr = (e["coupled_log2"] if coupled else e["single_log2"]) + noise(0.05)
        return {
            "log2_ratio": lr,
            "ratio": 2**lr,
            "l_sojourn_ms": e["l_delay"] + noise(0.01) if coupled else math.nan,
            "l_delay_p99_ms": e["l_p99"] + noise(0.02) if coupled else math.nan,
            "c_sojourn_ms": e["c_delay"] + noise(0.2) if coupled else math.nan,
            "scalable_drops": e["drops"] if coupled else 20.0,
        }

    configs = [
        {"aqm": a, "scalable": c, "rate_mbps": float(r), "rtt_ms": t}
        for a in l4s.AQMS
        for c in l4s.SCALABLE
        for r in g["rates_mbps"]
        for t in g["rtts_ms"]
    ]
    mix_configs = [
        {"aqm": a, "scalable": c, "mix": m}
        for a in l4s.AQMS
        for c in l4s.SCALABLE
        for m in g["mixes"]
    ]
    pi2_configs = [{"aqm": a, "rtt_ms": t} for a in ("pi2", "pie") for t in g["pi2_rtts_ms"]]

    def pi2(cfg: dict, seed: int) -> dict:
        is_pi2 = cfg["aqm"] == "pi2"
        return {
            "utilization": 0.98 + (e["pi2_util"] if is_pi2 else 0.0) + noise(0.002),
            "queue_sd_ms": 5.0 * (e["pi2_sd"] if is_pi2 else 1.0) * (1 + noise(0.02)),
        }

    return {
        "coexist": pd.DataFrame(_rows("coexist", configs, coexist)),
        "mix": pd.DataFrame(_rows("mix", mix_configs, coexist)),
        "pi2-classic": pd.DataFrame(_rows("pi2-classic", pi2_configs, pi2)),
    }


WITHOUT: dict[str, dict[str, Any]] = {
    "coupled-rate-balance": {"coupled_log2": -3.0},
    "single-queue-starvation": {"single_log2": 0.0},
    "coupling-gain": {"coupled_log2": -4.0},
    "l-delay-sub-ms": {"l_delay": 3.0},
    "l-zero-loss": {"drops": 4.0},
    "mix-rate-balance": {"coupled_log2": 2.0},
    "prague-rate-balance": {"coupled_log2": -3.0},
    "c-queue-at-target": {"c_delay": 30.0},
    "l-delay-p99": {"l_p99": 5.0},
    "pi2-utilisation": {"pi2_util": -0.1},
    "pi2-stability": {"pi2_sd": 2.0},
}


def test_every_claim_has_a_world_without_its_effect() -> None:
    assert set(WITHOUT) == set(CLAIMS)


@pytest.mark.parametrize("claim_id", sorted(CLAIMS))
def test_a_claim_holds_with_the_papers_effect_and_is_reversed_without(claim_id: str) -> None:
    rec = CLAIMS[claim_id].evaluate(paper_world())
    assert rec["verdict"] == "holds", [t["name"] for t in rec["tests"] if t["verdict"] != "holds"]
    assert rec["n_seeds"] == SEEDS
    rec = CLAIMS[claim_id].evaluate(paper_world(**WITHOUT[claim_id]))
    assert rec["verdict"] == "reversed"


def test_a_run_that_did_not_finish_shows_as_a_seed_without_a_value() -> None:
    frames = paper_world()
    c = frames["coexist"].copy()
    failed = (c["aqm"] == "dualpi2") & (c["seed"] == 3)
    c.loc[failed, ["log2_ratio", "ratio", "l_sojourn_ms", "scalable_drops"]] = math.nan
    frames["coexist"] = c  # run_measures keeps a failed run's row, its measures NaN
    for claim in ("coupled-rate-balance", "l-delay-sub-ms", "l-zero-loss", "coupling-gain"):
        rec = CLAIMS[claim].evaluate(frames)
        grid = [t for t in rec["tests"] if not t["name"].startswith("mix")]
        assert all("3" in t["not_finite"] and t["n_seeds"] == SEEDS - 1 for t in grid), claim
    # A row missing altogether: a paired difference reports the seed too.
    frames["coexist"] = frames["coexist"][~failed]
    rec = CLAIMS["coupling-gain"].evaluate(frames)
    assert all("3" in t["not_finite"] for t in rec["tests"])


# ----- real runs --------------------------------------------------------------------------------


def test_short_runs_give_every_measure_and_the_report(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny = {
        "duration_s": 6.0,
        "warmup_s": 2.0,
        "rates_mbps": [12],
        "rtts_ms": [20],
        "mixes": ["1:1", "1:4"],
        "pi2_rtts_ms": [20],
    }
    monkeypatch.setitem(l4s.GRIDS, "quick", tiny)
    monkeypatch.setattr(l4s.L4sStudy, "seeds", {"quick": SeedPlan(2, 0, 2)})
    monkeypatch.setattr(l4s.L4sStudy, "claims", ())
    report = reproduce(l4s.STUDY, "quick", tmp_path, jobs=1, progress=False)
    assert report.failed_runs == 0
    from ecnlab.reproduce._study import Results

    frames = l4s.STUDY.measures(Results(tmp_path, "quick", ("coexist", "mix", "pi2-classic")))
    c = frames["coexist"]
    assert len(c) == 8 and set(c["aqm"]) == set(l4s.AQMS)
    assert set(c["scalable"]) == set(l4s.SCALABLE)
    c = c[c["scalable"] == "dctcp"]
    assert (c["rate_mbps"] == 12).all()
    d = c[c["aqm"] == "dualpi2"].iloc[0]
    p = c[c["aqm"] == "pie-ecn"].iloc[0]
    cols = ("l_sojourn_ms", "c_sojourn_ms", "l_delay_ms", "l_delay_p99_ms", "c_delay_ms")
    for col in ("classic_mbps", "scalable_mbps", *cols):
        assert math.isfinite(d[col]) and d[col] >= 0, col
    assert all(math.isnan(p[col]) for col in cols)  # one queue: no L or C queue
    # The per-packet means are the queues' totals over the window: the C queue's mean delay
    # lies within the range of its sampled head delays, and above zero with a CUBIC flow.
    assert 0 < d["c_sojourn_ms"] < 10 * max(d["c_delay_ms"], 1.0)
    # The two flows share 12 Mb/s: their goodputs add up to at most the link.
    assert 0 < d["classic_mbps"] + d["scalable_mbps"] <= 12
    assert d["ratio"] == pytest.approx(d["classic_mbps"] / d["scalable_mbps"])
    assert 0 < d["utilization"] <= 1
    m = frames["mix"]
    assert set(m["mix"]) == {"1:1", "1:4"}
    assert frames["pi2-classic"]["queue_sd_ms"].notna().all()
    assert (tmp_path / "report.html").exists() and (tmp_path / "claims.json").exists()
    for key in ("coexist-ratio", "coexist-delay", "mix", "pi2-classic"):
        assert (tmp_path / "figures" / f"{key}.png").exists(), key


def test_claims_read_only_points_of_the_quick_grid() -> None:
    frames = paper_world()
    for c in l4s.CLAIMS:
        rec = c.evaluate(frames)
        assert all(t["n_seeds"] == SEEDS for t in rec["tests"]), c.id
