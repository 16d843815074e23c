"""The ECN+ reproduction: its sweeps and pairing, and every claim of its table on synthetic runs
with the paper's effect (it must hold) and without it (it must not)."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pytest
from ecnlab.calibration import resolve_load
from ecnlab.reproduce import ecn_plus as ep
from ecnlab.reproduce import get_study, part_sweeps
from ecnlab.reproduce import verdict as V


def _runs(mode: str) -> dict[str, list[Any]]:
    return {k: s.runs() for k, s in part_sweeps(get_study("ecn-plus"), mode, at="cap").items()}


@pytest.fixture(scope="module")
def quick() -> dict[str, list[Any]]:
    return _runs("quick")


PARTS = {"web", "threshold", "general", "model", "deployment", "testbed", "ecn-plus-plus"}


def test_every_part_is_valid_in_both_modes(quick: dict) -> None:
    full = _runs("full")
    assert set(quick) == set(full) == PARTS
    for mode, runs in (("quick", quick), ("full", full)):
        seeds = {r.seed for r in runs["web"]}
        assert len(seeds) == ep.SEEDS[mode].cap
        # web: 2 loads x 4 AQMs x 3 ECN modes + 2 references, per seed.
        assert len(runs["web"]) == len(seeds) * (2 * 4 * 3 + 2)
        assert len(runs["testbed"]) == len(seeds) * (3 + 1)
        assert len(runs["model"]) == len(seeds)
        assert len(runs["ecn-plus-plus"]) == len(seeds) * 4  # 4 AQMs at 105%, no reference
        loads = len(ep.QUICK_GENERAL_LOADS) if mode == "quick" else 2
        assert len(runs["general"]) == len(seeds) * loads * (2 + 1)
        assert all({r.seed for r in part} == seeds for part in runs.values())
    # Both modes measure after the same warm-up; the full mode's window is longer.
    for part, kind in (("web", "web"), ("testbed", "testbed"), ("general", "general")):
        q, f = quick[part][0].scenario, full[part][0].scenario
        assert q["warmup_s"] == f["warmup_s"] == ep.WARMUP_S[kind]
        assert f["duration_s"] - f["warmup_s"] > q["duration_s"] - q["warmup_s"]


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
    schemes = {r.labels["scheme"]: r.scenario for r in quick["general"] if not r.reference}
    assert _switches(schemes["threshold, ECN+"]) == (True, True, "seed")
    pi = schemes["PI, no ECN"]
    assert pi["topology"]["bottleneck"]["queue"]["aqm"]["kind"] == "pi"
    assert (pi["tcp"]["ecn"], pi["tcp"]["ecn_plus"]) == (False, "off")


def test_the_ecn_plus_plus_mode_turns_on_the_drafts_switches_on_every_host(quick: dict) -> None:
    """ECN++: the AQM marks, every host negotiates AccECN and sends SYNs, pure ACKs, FINs and
    retransmissions ECN-capable, with RFC 5562's SYN-ACK; the AQMs are the web part's."""
    web_aqms = {
        r.labels["aqm"]: r.scenario["topology"]["bottleneck"]["queue"]["aqm"]
        for r in quick["web"]
        if not r.reference and r.labels["ecn_mode"] == "ECN+"
    }
    for r in quick["ecn-plus-plus"]:
        assert r.labels["ecn_mode"] == ep.ECN_PLUS_PLUS and r.labels["load"] == "105%"
        tcp = r.scenario["tcp"]
        assert (tcp["ecn"], tcp["ecn_feedback"], tcp["ecn_plus"]) == (True, "accecn", "rfc5562")
        assert all(tcp[k] for k in ("ect_syn", "ect_pure_acks", "ect_fins", "ect_retransmissions"))
        assert "clients" not in tcp and "servers" not in tcp  # both sides inherit [tcp]
        assert r.scenario["topology"]["bottleneck"]["queue"]["aqm"] == web_aqms[r.labels["aqm"]]


def test_runs_of_a_seed_and_load_offer_the_same_traffic(quick: dict) -> None:
    """Pairing: whatever the AQM or ECN setting, a seed and load share the workload and the
    hosts; the reference differs from them only in the bottleneck."""
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = defaultdict(list)
    for part in ("web", "threshold", "general", "ecn-plus-plus"):
        family = "general" if part == "general" else "web"
        for r in quick[part]:
            groups[(family, r.seed, r.labels["load"])].append(r.scenario)
    for (family, _, load), scenarios in groups.items():
        # web: the grid, the reference and the threshold run (at 105% also the four ECN++
        # runs); general: two schemes, reference
        ecnpp = 4 if load == "105%" else 0
        assert len(scenarios) == (4 * 3 + 1 + 1 + ecnpp if family == "web" else 2 + 1)
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


def test_the_model_part_is_the_models_validation_scenario_at_figure_8s_point(quick: dict) -> None:
    sc = quick["model"][0].scenario
    assert sc["topology"]["bottleneck"]["rate_bps"] == ep.MODEL_CAPACITY_BPS
    assert sc["topology"]["bottleneck"]["queue"]["aqm"]["kind"] == "droptail"
    assert sc["topology"]["bottleneck"]["queue"]["limit_pkts"] >= 1_000_000  # never overflows
    assert sc["warmup_s"] == ep.WARMUP_S["model"]


def test_packaged_calibrations_match_their_scenarios() -> None:
    from ecnlab._scenario import _read_toml

    for name, load, knob in (
        ("web-sessions", 90, "session_rate_per_s"),
        ("testbed", 15, "browsers"),
        ("general", 90, "arrival_rate_per_s"),
    ):
        scenario = _read_toml(ep.DATA / f"{name}.toml")
        resolved = resolve_load(scenario, ep.DATA)  # refuses a calibration made for other knobs
        assert resolved["workloads"][0][knob] != scenario["workloads"][0][knob]
        assert "load" not in resolved and scenario["load"]["offered_load_mbps"] == load


# --- the claims on synthetic runs ---------------------------------------------------------------

Row = dict[str, Any]
World = dict[str, list[Row]]
"""Per part, one row per configuration: its labels and the mean of each measure."""

SEEDS = 5
_PATTERN = (-1.0, -0.4, 0.1, 0.5, 0.8)
"""Per-seed deviations (in units of a measure's noise), rotated per configuration."""
NOISE = {"f05": 0.2, "f3": 0.2, "nt": 0.03, "model_p": 0.002, "sim_p": 0.002, "ctl_drops": 3.0}
"""Seed-to-seed noise per measure (absolute); others get 1% of their mean."""
_LABELS = {"seed", "reference", "load_label", "aqm_label", "ecn_mode_label", "scheme_label",
           "fraction_label", "clients"}  # fmt: skip


def synthetic(world: World, seeds: int = SEEDS) -> dict[str, pd.DataFrame]:
    """Per-run frames shaped like :meth:`EcnPlus.measures`: each configuration's means plus a
    small deviation per seed (a different rotation of one pattern per configuration)."""
    frames = {}
    for part, configs in world.items():
        rows = []
        for i, config in enumerate(configs):
            for seed in range(1, seeds + 1):
                k = _PATTERN[(seed + i) % len(_PATTERN)]
                row = {"seed": seed}
                for col, v in config.items():
                    if col in _LABELS or not isinstance(v, (int, float)):
                        row[col] = v
                    else:
                        row[col] = v + k * NOISE.get(col, 0.01 * abs(v))
                rows.append(row)
        frames[part] = pd.DataFrame(rows)
    return frames


def _web(load: str, aqm: str | None, mode: str | None, f05: float, nt: float) -> Row:
    return {"reference": aqm is None, "load_label": load, "aqm_label": aqm,
            "ecn_mode_label": mode, "f05": f05, "nt": nt, "ctl_drops": 400.0}  # fmt: skip


# The seed's effects, as numbers (responses within 0.5 s, %; throughput, % of capacity).
_F05 = {
    ("90%", "RED"): (80.0, 82.0, 90.0), ("105%", "RED"): (70.0, 72.0, 85.0),
    ("90%", "RED*"): (75.0, 30.0, 94.0), ("105%", "RED*"): (65.0, 25.0, 92.0),
    ("90%", "REM"): (60.0, 92.5, 93.5), ("105%", "REM"): (50.0, 70.0, 92.5),
    ("90%", "PI"): (88.0, 90.0, 94.5), ("105%", "PI"): (80.0, 84.0, 93.5),
}  # fmt: skip
_NT_NONE = {("90%", "RED"): 84.0, ("90%", "RED*"): 72.0, ("90%", "REM"): 70.0,
            ("90%", "PI"): 86.09, ("105%", "RED"): 94.0, ("105%", "RED*"): 75.0,
            ("105%", "REM"): 80.0, ("105%", "PI"): 99.89}  # fmt: skip


def paper_world() -> World:
    web = []
    for (load, aqm), levels in _F05.items():
        for mode, f in zip(ep.ECN_MODES, levels):
            t = ep.PAPER_TABLE1.get((load, aqm, mode), _NT_NONE[(load, aqm)])
            web.append(_web(load, aqm, mode, f, t))
    web += [_web(load, None, None, 95.0, 95.0) for load in ep.LOADS]
    general = [
        {"reference": False, "load_label": load, "scheme_label": name, "f05": f, "nt": t}
        for load, name, f, t in (
            ("90%", "threshold, ECN+", 93.0, 76.81), ("90%", "PI, no ECN", 85.0, 80.92),
            ("105%", "threshold, ECN+", 92.0, 88.43), ("105%", "PI, no ECN", 80.0, 96.48),
        )
    ] + [
        {"reference": True, "load_label": load, "scheme_label": None, "f05": 95.0,
         "nt": 9.0, "model_p": 0.61}
        for load in ep.LOADS
    ]  # fmt: skip
    deployment = [
        {"reference": False, "fraction_label": frac, "clients": cls, "f05": f}
        for frac, cls, f in (
            ("5%", "ECN", 94.0), ("5%", "non-ECN", 80.0),
            ("50%", "ECN", 93.8), ("50%", "non-ECN", 79.0),
            ("95%", "ECN", 93.0), ("95%", "non-ECN", 75.0),
        )
    ] + [{"reference": True, "fraction_label": None, "clients": "all", "f05": 95.0}]  # fmt: skip
    testbed = [
        {"reference": False, "ecn_mode_label": mode, "mean_s": m, "nt": t, "served": s, "f3": f}
        for mode, m, t, s, f in (
            ("no ECN", 26.0, 44.0, 700.0, 60.0),
            ("ECN", 4.5, 56.0, 1000.0, 85.0),
            ("ECN+", 0.5, 99.0, 1500.0, 99.0),
        )
    ] + [{"reference": True, "ecn_mode_label": None, "mean_s": 0.1, "nt": 15.0,
          "served": 1600.0, "f3": 100.0}]  # fmt: skip
    # ECN++ as the draft would have it: as fast as ECN+, a quarter of its control drops.
    ecnpp = [
        {**_web("105%", aqm, ep.ECN_PLUS_PLUS, levels[2] + 0.3, 99.0), "ctl_drops": 100.0}
        for (load, aqm), levels in _F05.items()
        if load == "105%"
    ]
    return {
        "web": web,
        "ecn-plus-plus": ecnpp,
        "threshold": [
            {"load_label": "90%", "f05": 94.0, "nt": 85.05},
            {"load_label": "105%", "f05": 93.0, "nt": 97.37},
        ],
        "general": general,
        "model": [{"model_p": 0.08, "sim_p": 0.05}],
        "deployment": deployment,
        "testbed": testbed,
    }


def _rows(world: World, part: str, **match: Any) -> list[Row]:
    rows = [r for r in world[part] if all(r.get(k) == v for k, v in match.items())]
    assert rows, f"no row of {part} matches {match}"
    return rows


def _set(
    world: World, part: str, col: str, value: float | Callable[[Row], float], **match: Any
) -> None:
    for r in _rows(world, part, **match):
        r[col] = value(r) if callable(value) else value


def _get(world: World, part: str, col: str, **match: Any) -> float:
    (row,) = _rows(world, part, **match)
    return float(row[col])


def _web_get(world: World, load: str, aqm: str, mode: str, col: str = "f05") -> float:
    return _get(world, "web", col, load_label=load, aqm_label=aqm, ecn_mode_label=mode)


def _web_set(world: World, load: str, aqm: str, mode: str, value: float, col: str = "f05") -> None:
    _set(world, "web", col, value, load_label=load, aqm_label=aqm, ecn_mode_label=mode)


def _copy_mode(
    world: World, aqm: str, src: str, dst: str, col: str = "f05", loads=ep.LOADS
) -> None:
    for load in loads:
        _web_set(world, load, aqm, dst, _web_get(world, load, aqm, src, col), col)


def _flat(world: World, part: str, col: str, value: float, **match: Any) -> None:
    _set(world, part, col, value, **match)


def _equal_gains(w: World) -> None:
    for aqm in ep.AQMS:
        g90 = _web_get(w, "90%", aqm, "ECN+") - _web_get(w, "90%", aqm, "ECN")
        _web_set(w, "105%", aqm, "ECN+", _web_get(w, "105%", aqm, "ECN") + g90)


def _threshold_margin_constant(w: World) -> None:
    lead90 = _get(w, "threshold", "f05", load_label="90%") - _web_get(w, "90%", "PI", "no ECN")
    _set(w, "threshold", "f05", _web_get(w, "105%", "PI", "no ECN") + lead90, load_label="105%")


def _general_gap_as_web(w: World) -> None:
    for load in ep.LOADS:
        web_gap = _web_get(w, load, "PI", "no ECN", "nt") - _get(
            w, "threshold", "nt", load_label=load
        )
        pi = _get(w, "general", "nt", load_label=load, scheme_label="PI, no ECN")
        _set(w, "general", "nt", pi - web_gap, load_label=load, scheme_label="threshold, ECN+")


WITHOUT: dict[str, Callable[[World], None]] = {
    "uncongested-best": lambda w: _flat(w, "web", "f05", 30.0, reference=True),
    "load-90-better-than-105": lambda w: [
        _web_set(w, "105%", aqm, mode, _web_get(w, "90%", aqm, mode))
        for aqm in ep.AQMS for mode in ep.ECN_MODES
    ],
    "red-ecnplus-better-than-ecn": lambda w: _copy_mode(w, "RED", "ECN", "ECN+"),
    "red-ecn-small-gain": lambda w: _copy_mode(w, "RED", "no ECN", "ECN"),
    "redstar-ecn-worse-than-none-90": lambda w: _copy_mode(w, "RED*", "no ECN", "ECN", loads=["90%"]),
    "redstar-ecnplus-better-than-none": lambda w: _copy_mode(w, "RED*", "no ECN", "ECN+"),
    "redstar-ecnplus-near-uncongested-90": lambda w: _copy_mode(w, "RED*", "no ECN", "ECN+", loads=["90%"]),
    "rem-ecn-better-than-none": lambda w: _copy_mode(w, "REM", "no ECN", "ECN"),
    "rem-ecnplus-marginal-90": lambda w: _web_set(w, "90%", "REM", "ECN", 80.0),
    "rem-ecnplus-insensitive-to-load": lambda w: _web_set(w, "105%", "REM", "ECN+", 80.0),
    "pi-ecn-and-ecnplus-improve": lambda w: [_copy_mode(w, "PI", "no ECN", m) for m in ("ECN", "ECN+")],
    "pi-ecnplus-near-uncongested": lambda w: _copy_mode(w, "PI", "no ECN", "ECN+"),
    "ecnplus-gain-grows-with-load": _equal_gains,
    "ecnplus-improves-every-aqm": lambda w: [_copy_mode(w, a, "no ECN", "ECN+") for a in ep.AQMS],
    "pi-best-with-ecnplus": lambda w: [_web_set(w, ld, "PI", "ECN+", 85.0) for ld in ep.LOADS],
    "ecnplus-narrows-pi-lead": lambda w: [_copy_mode(w, a, "no ECN", "ECN+") for a in ep.AQMS],
    "redstar-about-rem-with-ecnplus": lambda w: [
        _web_set(w, ld, "REM", "ECN+", _web_get(w, ld, "RED*", "ECN+") - 10) for ld in ep.LOADS
    ],
    "redstar-beats-red-with-ecnplus": lambda w: [
        _web_set(w, ld, "RED", "ECN+", _web_get(w, ld, "RED*", "ECN+")) for ld in ep.LOADS
    ],
    "table1-ecnplus-gain-positive": lambda w: [_copy_mode(w, a, "ECN", "ECN+", "nt") for a in ep.AQMS],
    "table1-redstar-gain-6-to-20": lambda w: _copy_mode(w, "RED*", "ECN", "ECN+", "nt"),
    "table1-other-gains-moderate": lambda w: [
        _web_set(w, ld, a, "ECN+", _web_get(w, ld, a, "ECN", "nt") + 15, "nt")
        for a in ("RED", "REM", "PI") for ld in ep.LOADS
    ],
    "table1-redstar-gain-largest": lambda w: _copy_mode(w, "RED*", "ECN", "ECN+", "nt"),
    "threshold-ecnplus-faster-than-pi": lambda w: [
        _set(w, "threshold", "f05", _web_get(w, ld, "PI", "no ECN"), load_label=ld) for ld in ep.LOADS
    ],
    "threshold-margin-grows-with-load": _threshold_margin_constant,
    "threshold-pi-throughput-similar": lambda w: [
        _set(w, "threshold", "nt", _web_get(w, ld, "PI", "no ECN", "nt") - 10, load_label=ld)
        for ld in ep.LOADS
    ],
    "generic-ecnplus-beats-every-non-ecn-aqm": lambda w: _flat(w, "threshold", "f05", 70.0),
    "model-622-below-10pct": lambda w: [
        _flat(w, "model", "model_p", 0.3), _flat(w, "model", "sim_p", 0.2)
    ],
    "model-upper-bound": lambda w: _flat(w, "model", "model_p", 0.05),
    "general-threshold-throughput-lags-pi": lambda w: [
        _set(w, "general", "nt", _get(w, "general", "nt", load_label=ld, scheme_label="PI, no ECN"),
             load_label=ld, scheme_label="threshold, ECN+")
        for ld in ep.LOADS
    ],
    "general-lag-larger-than-web": _general_gap_as_web,
    "general-threshold-faster-than-pi": lambda w: _flat(w, "general", "f05", 85.0, reference=False),
    "model-general-100-above-half": lambda w: _flat(w, "general", "model_p", 0.3, reference=True),
    "deployment-ecn-clients-better": lambda w: _flat(w, "deployment", "f05", 80.0, reference=False),
    "deployment-ecn-clients-near-ideal-50": lambda w: _flat(
        w, "deployment", "f05", 79.0, fraction_label="50%", clients="ECN"
    ),
    "deployment-non-ecn-degrade": lambda w: _flat(w, "deployment", "f05", 80.0, clients="non-ECN"),
    "deployment-ecn-clients-slightly-worse-at-95": lambda w: _flat(
        w, "deployment", "f05", 93.8, fraction_label="95%", clients="ECN"
    ),
    "testbed-mean-response": lambda w: _flat(w, "testbed", "mean_s", 0.5),
    "testbed-ecnplus-mean-response-tenfold": lambda w: _flat(
        w, "testbed", "mean_s", 4.5, ecn_mode_label="ECN+"
    ),
    "testbed-throughput": lambda w: _flat(w, "testbed", "nt", 99.0),
    "testbed-throughput-up-40": lambda w: _flat(w, "testbed", "nt", 66.0, ecn_mode_label="ECN+"),
    "testbed-requests-served-50pct-more": lambda w: _flat(w, "testbed", "served", 1000.0),
    "testbed-tails": lambda w: _flat(w, "testbed", "f3", 90.0),
    "ecnplusplus-no-worse-than-ecnplus": lambda w: _set(
        w, "ecn-plus-plus", "f05", lambda r: _web_get(w, "105%", r["aqm_label"], "ECN+") - 5.0
    ),
    "ecnplusplus-fewer-control-drops": lambda w: _flat(w, "ecn-plus-plus", "ctl_drops", 400.0),
}  # fmt: skip
"""Per claim, how to take the seed's effect out of the world: configurations made equal (up to
seed noise) or the effect reversed."""

CLAIMS = {c.id: c for c in ep.CLAIMS}


def test_every_claim_has_a_world_without_its_effect() -> None:
    assert set(WITHOUT) == set(CLAIMS)
    assert len(CLAIMS) == len(ep.CLAIMS)  # ids are unique
    assert all(c.quote and c.location and c.justification for c in ep.CLAIMS)


@pytest.mark.parametrize("claim_id", sorted(CLAIMS))
def test_claim_holds_with_the_papers_effect(claim_id: str) -> None:
    record = CLAIMS[claim_id].evaluate(synthetic(paper_world()))
    assert record["verdict"] == "holds", record["tests"]
    assert record["n_seeds"] == SEEDS
    json.dumps(record, allow_nan=False)


@pytest.mark.parametrize("claim_id", sorted(CLAIMS))
def test_claim_does_not_hold_without_it(claim_id: str) -> None:
    world = paper_world()
    WITHOUT[claim_id](world)
    record = CLAIMS[claim_id].evaluate(synthetic(world))
    assert record["verdict"] != "holds", record["tests"]


def test_a_missing_configuration_leaves_its_claims_unresolved() -> None:
    """The quick mode runs the general mix at 90% only: its 105% tests see no seeds."""
    world = paper_world()
    world["general"] = [r for r in world["general"] if r["load_label"] == "90%"]
    record = CLAIMS["general-threshold-faster-than-pi"].evaluate(synthetic(world))
    assert record["verdict"] == "unresolved"
    by_name = {t["name"]: t for t in record["tests"]}
    assert by_name["90%"]["verdict"] == "holds" and by_name["105%"]["n_seeds"] == 0


def test_testbed_means_count_unfinished_exchanges() -> None:
    """The restricted mean of the testbed claims is the Kaplan-Meier one: an exchange still
    waiting at the end raises it above the mean of the completed ones."""
    done = pd.DataFrame({"completed": [True] * 9, "elapsed_s": [0.4] * 9, "seq_in_flow": [1] * 9})
    stuck = pd.DataFrame({"completed": [False], "elapsed_s": [100.0], "seq_in_flow": [0]})
    m = ep._response_measures(
        pd.concat([done, stuck], ignore_index=True), 120.0, first_exchanges=True
    )
    assert m["unfinished"] == 1 and m["served"] == 9
    assert m["mean_s"] > 10 * 0.4  # the completed ones alone average 0.4 s
    assert m["mean_lower_s"] == pytest.approx((9 * 0.4 + 100.0) / 10)
    assert m["f05"] == pytest.approx(90.0)
    # The one first exchange is still waiting: no completion ever ends its survival, so the
    # restricted mean is the horizon.
    assert m["first_mean_s"] == pytest.approx(120.0)
    assert m["first_share_pct"] == pytest.approx(10.0)


def test_bottleneck_counters_read_the_down_bottleneck_of_the_run() -> None:
    import duckdb

    con = duckdb.connect()
    con.execute(
        "CREATE TABLE links AS SELECT * FROM (VALUES "
        "('a', 'bottleneck_down', 300.0, 400.0, 3, 1, 10, 5, 2, 1, 800, 800000, 1, 2, 3), "
        "('a', 'bottleneck_down', 400.0, 500.0, 1, 0, 10, 5, 0, 0, 200, 100000, 0, 0, 4), "
        "('a', 'bottleneck_up', 300.0, 500.0, 9, 9, 90, 90, 9, 9, 900, 9, 9, 9, 9), "
        "('b', 'bottleneck_down', 300.0, 500.0, 7, 7, 70, 70, 7, 7, 700, 7, 7, 7, 7)) "
        "AS t(run_id, link, t_start_s, t_end_s, drops_synack, marks_synack, drops, marks, "
        "drops_forced, marks_forced, arrivals_pkts, delivered_bytes, drops_ack, drops_fin, "
        "drops_retx)"
    )
    con.execute("ALTER TABLE links ADD COLUMN delivered_pkts BIGINT DEFAULT 1000")
    counters = ep._bottleneck_counters(con)
    assert set(counters) == {"a", "b"}
    assert counters["b"]["synack_drops"] == 7.0
    c = counters["a"]
    assert (c["synack_drops"], c["synack_marks"]) == (4.0, 1.0)
    assert c["ctl_drops"] == 1 + 2 + 3 + 4  # pure ACKs, FINs, retransmissions; down only
    assert c["drop_pct"] == pytest.approx(2.0) and c["mark_pct"] == pytest.approx(1.0)
    assert c["forced_drop_pct"] == pytest.approx(0.2) and c["forced_mark_pct"] == pytest.approx(0.1)
    assert c["arrivals_pps"] == pytest.approx(1000 / 200)
    assert c["mean_pkt_bytes"] == pytest.approx(900000 / 2000)


def test_pooled_estimates_keep_the_exact_values_at_the_points_drawn() -> None:
    import duckdb
    import numpy as np
    from ecnlab import analysis

    rng = np.random.default_rng(2)
    ex = pd.DataFrame(
        {
            "completed": rng.random(5000) < 0.9,
            "elapsed_s": np.round(rng.exponential(0.4, 5000), 4),
            "seed": rng.integers(1, 4, 5000),
        }
    )
    con = duckdb.connect()
    con.execute("CREATE TABLE exchanges AS SELECT * FROM ex")
    results = SimpleNamespace(open=lambda part: con, seeds={"web": 2})
    grid = np.union1d(ep.CDF_GRID_S, ep.ccdf_grid(ep.HORIZON_S["testbed"]))
    pooled = ep.KaplanMeierSource(results, grid)("web", "elapsed_s < 5")
    kept = ex[(ex["seed"] <= 2) & (ex["elapsed_s"] < 5)]
    full = analysis.kaplan_meier(kept["elapsed_s"], kept["completed"])
    assert len(full) > len(ep.CDF_GRID_S)  # thinning keeps fewer points than the steps
    for x in (ep.CDF_GRID_S, ep.ccdf_grid(ep.HORIZON_S["testbed"])):
        assert ep.km_at(pooled, x).tolist() == ep.km_at(full, x).tolist()
    assert len(ep.KaplanMeierSource(results)("web", "elapsed_s < 0")) == 0


def test_model_quantities_follow_the_model() -> None:
    frame = pd.DataFrame({"reference": [True, False, True], "delivered_mbps": [90.0, 80.0, 150.0]})
    p = ep.general_model(frame)
    assert p.iloc[0] > 0.5 and math.isnan(p.iloc[1]) and math.isnan(p.iloc[2])


def test_claims_name_their_figures_and_their_parts() -> None:
    parts = {d["name"] for d in ep.STUDY.sweeps("quick")}
    for c in ep.CLAIMS:
        assert c.parts <= parts, c.id
        assert c.figure, c.id
    changed = [c.id for c in ep.CLAIMS if c.changed]
    assert changed == ["testbed-tails"]


def test_synthetic_frames_pair_by_seed() -> None:
    frames = synthetic(paper_world())
    web = frames["web"]
    assert len(web) == SEEDS * (8 * 3 + 2)
    q = V.measure("web", "f05", aqm_label="RED*", ecn_mode_label="ECN", load_label="90%")
    assert sorted(q.values(frames)) == list(range(1, SEEDS + 1))


def test_a_tiny_reproduction_runs_every_part_end_to_end(tmp_path, monkeypatch) -> None:
    """The study's measures, operating point, figures and report on real (seconds-long) runs:
    every claim decided (unresolved with one seed), every table and figure written."""
    from ecnlab.reproduce import MODES, SeedPlan, reproduce

    monkeypatch.setattr(ep, "WARMUP_S", {"web": 1.0, "testbed": 1.0, "general": 1.0, "model": 0.2})
    monkeypatch.setattr(
        ep,
        "WINDOW_S",
        {m: {"web": 2.0, "testbed": 4.0, "general": 2.0, "model": 0.3} for m in MODES},
    )
    monkeypatch.setattr(ep.EcnPlus, "seeds", {m: SeedPlan(1, 0, 1) for m in MODES})
    report = reproduce(ep.EcnPlus(), "quick", tmp_path, jobs=2, progress=False)
    assert report.failed_runs == 0
    doc = json.loads((tmp_path / "claims.json").read_text())
    assert [c["id"] for c in doc["claims"]] == [c.id for c in ep.CLAIMS]
    assert all(c["verdict"] == "unresolved" and c["n_seeds"] <= 1 for c in doc["claims"])
    op = doc["operating_point"]
    parts = {row["part"] for row in op["configurations"]}
    assert parts == PARTS
    assert any(c["check"].startswith("model") for c in op["checks"])
    for key in (
        "fig2-red",
        "fig6-threshold",
        "fig8-model",
        "fig12-testbed-ccdf",
        "table1",
        "fig-ecnplusplus",
    ):
        assert (tmp_path / "figures" / f"{key}.png").stat().st_size > 1000
    testbed = pd.read_csv(tmp_path / "tables" / "testbed.csv", index_col=0)
    assert "unfinished (all runs)" in testbed.columns


def test_table1_relative_to_the_uncongested_run_compares_delivered_load() -> None:
    # The uncongested run has a 1 Gb/s link: 90 Mb/s is 9% of its capacity, and a congested
    # run delivering 88 Mb/s of 100 is 97.8% of it, not 88 / 9.
    rows = [
        {"seed": s, "reference": True, "load_label": "90%", "aqm_label": None,
         "ecn_mode_label": None, "nt": 9.0, "delivered_mbps": 90.0}
        for s in (1, 2)
    ] + [
        {"seed": s, "reference": False, "load_label": "90%", "aqm_label": "PI",
         "ecn_mode_label": mode, "nt": 88.0, "delivered_mbps": 88.0}
        for s in (1, 2) for mode in ep.ECN_MODES
    ]  # fmt: skip
    table = ep.table1(pd.DataFrame(rows))
    rel = table.loc[("90%", "PI", "ECN"), "ours (% of uncongested)"]
    assert rel == pytest.approx(100 * 88 / 90)
