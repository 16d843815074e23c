"""The ECN+ reproduction's own logic: its sweeps, its pairing, its claim evaluation (no runs)."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import pandas as pd
import pytest
from ecnlab.calibration import resolve_load
from ecnlab.reproduce import ecn_plus as ep
from ecnlab.reproduce import get_study, part_sweeps


def _runs(mode: str) -> dict[str, list[Any]]:
    return {k: s.runs() for k, s in part_sweeps(get_study("ecn-plus"), mode).items()}


@pytest.fixture(scope="module")
def quick() -> dict[str, list[Any]]:
    return _runs("quick")


def test_every_part_is_valid_in_both_modes_and_quick_has_three_seeds(quick: dict) -> None:
    full = _runs("full")
    assert set(quick) == set(full) == {"web", "threshold", "deployment", "testbed"}
    for runs in (quick, full):
        # web: 2 loads x 4 AQMs x 3 ECN modes + 2 references, per seed.
        seeds = {r.seed for r in runs["web"]}
        assert len(runs["web"]) == len(seeds) * (2 * 4 * 3 + 2)
        assert len(runs["testbed"]) == len(seeds) * (3 + 1)
        assert all({r.seed for r in part} == seeds for part in runs.values())
    assert len({r.seed for r in quick["web"]}) >= 3
    full_web = next(r for r in full["web"] if not r.reference)
    quick_web = next(r for r in quick["web"] if not r.reference)
    assert full_web.scenario["duration_s"] > 2 * quick_web.scenario["duration_s"]


def _switches(scenario: dict[str, Any]) -> tuple[bool, bool, str]:
    return (
        scenario["topology"]["bottleneck"]["queue"]["aqm"]["ecn"],
        scenario["tcp"]["ecn"],
        scenario["tcp"]["ecn_plus"],
    )


def test_ecn_modes_switch_router_and_hosts_together(quick: dict) -> None:
    expected = {
        "no ECN": (False, False, "off"),
        "ECN": (True, True, "off"),
        "ECN+": (True, True, "seed"),
    }
    for part in ("web", "testbed"):
        for r in quick[part]:
            if not r.reference:
                assert _switches(r.scenario) == expected[r.labels["ecn_mode"]]
    aqm = {
        r.labels["aqm"]: r.scenario["topology"]["bottleneck"]["queue"]["aqm"]
        for r in quick["web"]
        if not r.reference
    }
    assert aqm["RED"]["above_max"] == "drop" and aqm["RED*"]["above_max"] == "mark"
    assert aqm["REM"]["b_star_pkts"] == aqm["PI"]["q_ref_pkts"] == 42  # 62.5 kB of 1500 B
    thr = quick["threshold"][0].scenario
    assert thr["topology"]["bottleneck"]["queue"]["aqm"]["k_bytes"] == 62_500
    assert _switches(thr) == (True, True, "seed")


def test_runs_of_a_seed_and_load_offer_the_same_traffic(quick: dict) -> None:
    """Pairing: whatever the AQM or ECN setting, a seed and load share the workload and the
    hosts; the reference differs from them only in the bottleneck."""
    groups: dict[tuple[int, str], list[dict[str, Any]]] = defaultdict(list)
    for part in ("web", "threshold"):
        for r in quick[part]:
            groups[(r.seed, r.labels["load"])].append(r.scenario)
    assert len(groups) == 2 * len({r.seed for r in quick["web"]})
    for scenarios in groups.values():
        assert len(scenarios) == 4 * 3 + 1 + 1  # the web grid, the reference, the threshold run
        keys = {
            json.dumps([s["workloads"], s["duration_s"], s["warmup_s"]], sort_keys=True)
            for s in scenarios
        }
        assert len(keys) == 1
        topo = {
            json.dumps({k: v for k, v in s["topology"].items() if k != "bottleneck"})
            for s in scenarios
        }
        assert len(topo) == 1
    rates = {
        r.labels["load"]: r.scenario["workloads"][0]["session_rate_per_s"] for r in quick["web"]
    }
    assert rates["105%"] / rates["90%"] == pytest.approx(105 / 90)
    for r in quick["web"]:
        rate = r.scenario["topology"]["bottleneck"]["rate_bps"]
        assert rate == (1e9 if r.reference else 100e6)
    fractions = [
        r.scenario["tcp"].get("clients", {}).get("ecn_fraction")
        for r in quick["deployment"]
        if not r.reference
    ]
    assert sorted(set(fractions)) == [0.05, 0.5, 0.95]


def test_packaged_calibrations_match_their_scenarios() -> None:
    from ecnlab._scenario import _read_toml

    for name, load, knob in (
        ("web-sessions", 90, "session_rate_per_s"),
        ("testbed", 15, "browsers"),
    ):
        scenario = _read_toml(ep.DATA / f"{name}.toml")
        resolved = resolve_load(scenario, ep.DATA)  # refuses a calibration made for other knobs
        assert resolved["workloads"][0][knob] > scenario["workloads"][0][knob]
        assert "load" not in resolved and scenario["load"]["offered_load_mbps"] == load


def test_ordering_verdicts() -> None:
    a = {1: 10.0, 2: 11.0, 3: 12.0}
    assert ep.ordering(a, {1: 5.0, 2: 6.0, 3: 7.1})["verdict"] == "holds"
    assert ep.ordering({1: 5.0, 2: 6.0, 3: 7.1}, a)["verdict"] == "reversed"
    assert ep.ordering(a, {1: 12.0, 2: 9.0, 3: 12.5})["verdict"] == "unresolved"
    assert ep.ordering(a, {1: 5.0, 2: 6.0, 3: 7.1}, margin=6)["verdict"] == "reversed"
    assert ep.ordering(a, {1: 5.0})["verdict"] == "unresolved"  # one seed decides nothing
    res = ep.ordering(a, {1: 9.0, 2: 9.0, 3: 9.0, 4: 0.0})  # unpaired seeds are left out
    assert res["a - b"]["n"] == 3 and res["a - b"]["mean"] == pytest.approx(2.0)


def _web_metrics(f05: dict[tuple[str, str, str], float], nt: float = 0.9) -> pd.DataFrame:
    """A synthetic ``web`` metrics frame: per (load, aqm, mode) an F(0.5 s), three seeds with
    small seed-to-seed noise, and the references at 0.99."""
    rows = []
    for seed, noise in ((1, -0.004), (2, 0.0), (3, 0.005)):
        for (load, aqm, mode), f in f05.items():
            rows.append({"seed": seed, "reference": False, "load_label": load, "aqm_label": aqm,
                         "ecn_mode_label": mode, "f05": f + noise, "nt": nt + noise})  # fmt: skip
        for load in ("90%", "105%"):
            rows.append({"seed": seed, "reference": True, "load_label": load, "aqm_label": None,
                         "ecn_mode_label": None, "f05": 0.99, "nt": 0.9})  # fmt: skip
    return pd.DataFrame(rows)


def test_web_claims_follow_the_paper_pattern_on_synthetic_input() -> None:
    """The paper's pattern passes the orderings it implies; its mirror image fails them."""
    level = {"no ECN": 0.70, "ECN": 0.60, "ECN+": 0.95}
    base = {(load, aqm, mode): v - (0.1 if load == "105%" else 0.0) + (0.01 if aqm == "PI" else 0.0)
            for load in ("90%", "105%") for aqm in ep.AQMS for mode, v in level.items()}  # fmt: skip
    claims = {c.id: c for c in ep.web_claims(_web_metrics(base))}
    assert claims["load-90-better-than-105"].passed
    assert claims["uncongested-best"].passed
    assert claims["redstar-ecn-worse-than-none-90"].passed
    assert claims["red-ecnplus-better-than-ecn-90"].passed
    assert not claims["red-ecn-small-gain"].passed  # ECN is worse than no ECN here
    assert claims["redstar-ecnplus-near-uncongested-90"].passed  # 95% vs 99%: within 5 points
    # Equal throughput everywhere: ECN+ is "at least" ECN, but no gain grows with load.
    assert claims["ecnplus-throughput-not-below-ecn"].passed
    assert not claims["redstar-ecnplus-throughput-gain-grows"].passed
    assert all(isinstance(c.ours, dict) and isinstance(c.passed, bool) for c in claims.values())
    json.dumps([c.record() for c in claims.values()], allow_nan=False)

    mirrored = {k: 1.0 - v for k, v in base.items()}
    claims = {c.id: c for c in ep.web_claims(_web_metrics(mirrored))}
    assert not claims["load-90-better-than-105"].passed
    assert claims["load-90-better-than-105"].ours["RED ECN"]["verdict"] == "reversed"
    assert not claims["redstar-ecn-worse-than-none-90"].passed


def test_table1_puts_the_papers_numbers_beside_ours() -> None:
    f = {
        (load, aqm, mode): 0.8
        for load in ("90%", "105%")
        for aqm in ep.AQMS
        for mode in ep.ECN_MODES
    }
    m = ep.with_relative_throughput(
        _web_metrics(f).assign(delivered_bytes=lambda d: d["nt"] * 1e9), ["load_label"]
    )
    table = ep.table1(m)
    assert table.loc[("105%", "RED*", "ECN+"), "paper (%)"] == 96.51
    assert table.loc[("90%", "PI", "ECN"), "ours (% of capacity)"] == pytest.approx(
        90 + 0.1 / 3, abs=0.01
    )
    assert table.loc[("90%", "PI", "ECN"), "ours (% of uncongested)"] == pytest.approx(100.0, abs=1)
    assert table["seeds"].eq(3).all()


def test_testbed_claims_on_synthetic_input() -> None:
    """The paper's testbed numbers pass its orderings; a slower ECN+ fails the response ones."""
    rows = []
    paper = {"no ECN": (26.0, 0.44, 0.3), "ECN": (4.5, 0.56, 0.1), "ECN+": (0.5, 0.99, 0.01)}
    for seed, noise in ((1, 0.99), (2, 1.0), (3, 1.01)):
        for mode, (rt, nt, tail) in paper.items():
            rows.append({"seed": seed, "reference": False, "ecn_mode_label": mode,
                         "mean_rt_s": rt * noise, "nt": nt * noise, "tail": tail * noise})  # fmt: skip
    m = pd.DataFrame(rows)
    claims = {c.id: c for c in ep.testbed_claims(m)}
    assert all(c.passed for c in claims.values()), [c.id for c in claims.values() if not c.passed]
    m.loc[m["ecn_mode_label"] == "ECN+", "mean_rt_s"] = 5.0
    claims = {c.id: c for c in ep.testbed_claims(m)}
    assert not claims["testbed-mean-response-order"].passed
    assert claims["testbed-mean-response-order"].ours["ECN vs ECN+"]["verdict"] == "reversed"
    assert not claims["testbed-ecnplus-mean-response-tenfold"].passed
    assert claims["testbed-throughput-order"].passed and claims["testbed-tails"].passed
