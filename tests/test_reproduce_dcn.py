"""Seed 004 (DCN) reproduction: the sweeps it defines and the statistics its claims rest on."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from ecnlab.calibration import load_calibration
from ecnlab.reproduce import dcn, get_study, part_sweeps


def _runs(mode: str) -> dict[str, list]:
    return {k: s.runs() for k, s in part_sweeps(get_study("dcn"), mode).items()}


def test_quick_parts_have_the_seed_setup() -> None:
    runs = _runs("quick")
    # 3 loads x 5 schemes x 3 seeds + 3 uncongested loads x 3 seeds; ECN: 3 x 3 x 3;
    # the mix: 2 schemes x 3 seeds + 3 uncongested, then 3 x 3.
    assert {k: len(v) for k, v in runs.items()} == {
        "http": 54,
        "http-ecn": 27,
        "tcp-mix": 9,
        "tcp-mix-ecn": 9,
    }
    http_cal = load_calibration(dcn.DATA / "http.calibration.json")
    for name, rs in runs.items():
        for r in rs:
            sc = r.scenario
            assert sc["duration_s"] == dcn.DURATIONS["quick"][name.replace("-ecn", "")][0]
            assert sc["tcp"]["min_rto_s"] == 1
            w = sc["workloads"][0]
            assert w["rwnd_bytes"] == {"dist": "constant", "value": 16384}
            assert w["rtt_ms"]["values"] == list(range(10, 151))
            assert len(set(w["rtt_ms"]["weights"])) == 1
            rate = sc["topology"]["bottleneck"]["rate_bps"]
            queue = sc["topology"]["bottleneck"]["queue"]
            aqm = queue.get("aqm", {"kind": "droptail"})
            assert rate == (1e9 if r.reference else 100e6)
            # ECN at the endpoints exactly in the ECN parts, and then every AQM marks.
            assert sc["tcp"]["ecn"] is name.endswith("-ecn")
            assert aqm.get("ecn", False) is name.endswith("-ecn")
            if aqm["kind"] == "droptail":
                assert queue["limit_pkts"] == 240
            else:
                assert queue["limit_pkts"] == dcn.AQM_LIMIT_PKTS
            if name.startswith("http"):
                load = r.axes["load"]
                assert w["rate_per_s"] == pytest.approx(
                    http_cal.knob_values(load)["workloads.0.rate_per_s"]
                )
    q_refs = {
        (r.labels["scheme"], r.scenario["topology"]["bottleneck"]["queue"]["aqm"].get("q_ref_pkts"))
        for r in runs["tcp-mix-ecn"]
    }
    assert ("PI/ECN", 240) in q_refs  # Table 2: PI/ECN with q_ref 240


def test_mix_offers_the_asymmetric_loads_per_direction() -> None:
    cal = load_calibration(dcn.DATA / "tcp-mix.calibration.json")
    knobs = cal.knob_values({"down": 105.3, "up": 91.2})
    for r in _runs("quick")["tcp-mix"]:
        rates = [w["arrival_rate_per_s"] for w in r.scenario["workloads"]]
        assert rates == pytest.approx(
            [knobs["workloads.0.arrival_rate_per_s"], knobs["workloads.1.arrival_rate_per_s"]]
        )


def test_full_mode_measures_the_papers_90_minutes() -> None:
    study = get_study("dcn")
    for d in study.sweeps("full"):
        assert d["set"]["duration_s"] - d["set"]["warmup_s"] == 5400
        assert study.seed_plan("full", d["name"]).start == 3


def _data() -> dcn.Data:
    """Two schemes at one load, two seeds, with hand-made histograms."""
    ident = pd.DataFrame(
        {
            "run_id": ["a1", "a2", "b1", "b2"],
            "seed": [1, 2, 1, 2],
            "load": [98] * 4,
            "scheme": ["DCN", "DCN", "PI/ECN", "PI/ECN"],
        }
    )
    # DCN: every response in bin 10 (0.10-0.11 s); PI/ECN: half there, half at 2 s or more.
    rt = pd.DataFrame(
        {
            "run_id": ["a1", "a2", "b1", "b1", "b2", "b2"],
            "small": [True] * 6,
            "bin": [10, 10, 10, 200, 10, 200],
            "n": [100, 100, 50, 50, 50, 50],
            "capped_sum": [10.5, 10.5, 5.25, 100.0, 5.25, 100.0],
        }
    ).merge(ident, on="run_id")
    big = pd.DataFrame(
        {"run_id": ["a1"] * 4 + ["b1"] * 4, "rt": [1.0, 2.0, 3.0, 40.0, 2.0, 3.0, 4.0, 5.0]}
    ).merge(ident, on="run_id")
    nbytes = pd.DataFrame(
        {"run_id": ["a1", "a1", "b1", "b1"], "bin": [40, 60, 40, 60], "bytes": [3, 1, 1, 1]}
    ).merge(ident, on="run_id")
    return dcn.Data(ident, rt, big, nbytes)


def test_capped_mean_counts_unfinished_as_two_seconds() -> None:
    cm = dcn.capped_mean(_data()).set_index(["scheme", "seed"])["capped_mean_s"]
    assert cm[("DCN", 1)] == pytest.approx(0.105)
    assert cm[("PI/ECN", 2)] == pytest.approx((5.25 + 100.0) / 100)


def test_cdf_grid_pools_seeds_and_stops_below_two_seconds() -> None:
    grid = dcn.cdf_grid(_data())
    assert grid.columns[0] == pytest.approx(0.01) and grid.columns[-1] == pytest.approx(2.0)
    assert grid.loc[("DCN", 98), 0.1] == 0.0  # bin 10 is [0.10, 0.11)
    assert grid.loc[("DCN", 98)].iloc[10] == 1.0
    assert grid.loc[("PI/ECN", 98)].iloc[-1] == pytest.approx(0.5)


def test_best_version_and_ratios_are_paired_by_seed() -> None:
    cm = dcn.capped_mean(_data())
    pi = cm[cm["scheme"] == "PI/ECN"].assign(scheme="PI", capped_mean_s=9.0)
    cm = pd.concat([cm, pi])
    assert dcn.best_version(cm, "PI", 98) == "PI/ECN"
    a = dcn.per_seed_values(cm, "capped_mean_s", "DCN", 98)
    b = dcn.per_seed_values(cm, "capped_mean_s", "PI/ECN", 98)
    assert dcn.ratio(a, b) == pytest.approx([0.105 / 1.0525] * 2)
    assert dcn.per_seed_values(cm, "capped_mean_s", "AFD", 98) == []


def test_byte_share_and_large_response_comparison() -> None:
    d = _data()
    share = dcn.byte_share_below(d, 1e5).set_index("scheme")["share"]
    # bin 40 is 10^4.0-10^4.1 bytes (below 100 kB); bin 60 is 1 MB.
    assert share["DCN"] == pytest.approx(0.75) and share["PI/ECN"] == pytest.approx(0.5)
    # DCN is faster at low quantiles of the > 100 kB responses, slower at the top.
    worse = dcn._large_worse_share(d, 98)
    assert 0 < worse < 1
    assert math.isnan(dcn._large_worse_share(d, 90))
