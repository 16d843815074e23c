"""The benchmark: its scenarios are valid, and ``ecnlab bench`` reports the documented keys."""

from __future__ import annotations

import json

import pytest
from conftest import assert_one_line_error, invoke
from ecnlab import _core, bench
from ecnlab.bench import KEYS


def test_dumbbell_rtts_are_spread_evenly() -> None:
    scenario = bench.scenario("dumbbell-10m", 5)
    rtts = [w["rtt_ms"]["value"] for w in scenario["workloads"]]
    assert rtts == [20, 90, 160, 230, 300]
    assert bench.scenario("dumbbell-10m", 1)["workloads"][0]["rtt_ms"]["value"] == 20


@pytest.mark.parametrize("case", bench.CASES, ids=lambda c: c.label)
def test_bench_scenarios_are_valid(case: bench.Case) -> None:
    for smoke in (False, True):
        normalized = json.loads(
            _core.normalize(json.dumps(bench.scenario(case.scenario, case.n, smoke=smoke)))
        )
        assert normalized["duration_s"] > normalized["warmup_s"] > 0


def test_dumbbell_10m_runs_red_with_ecn() -> None:
    scenario = bench.scenario("dumbbell-10m", 15)
    aqm = scenario["topology"]["bottleneck"]["queue"]["aqm"]
    assert aqm["kind"] == "red" and aqm["ecn"] and aqm["above_max"] == "mark"
    assert scenario["tcp"]["ecn"] is True
    assert bench.scenario("dumbbell-100m", 100)["topology"]["bottleneck"]["queue"]["aqm"] == {
        "kind": "droptail"
    }


def test_web_load_is_105_percent() -> None:
    (workload,) = bench.scenario("web-100m")["workloads"]
    offered_bps = workload["arrival_rate_per_s"] * bench.WEB_MEAN_RESPONSE_BYTES * 8
    assert offered_bps == pytest.approx(1.05 * 100e6)


def test_parse_case() -> None:
    assert bench.parse_case("dumbbell-10m:15") == [bench.Case("dumbbell-10m", 15)]
    assert [c.n for c in bench.parse_case("dumbbell-10m")] == [15, 60, 240]
    assert bench.parse_case("web-100m") == [bench.Case("web-100m")]
    for bad in ("nosuch", "dumbbell-10m:x", "dumbbell-10m:0", "web-100m:3"):
        with pytest.raises(ValueError):
            bench.parse_case(bad)


def test_bench_smoke_json_in_a_subprocess() -> None:
    result = invoke("bench", "--smoke", "--json", "--repeat", "3", "--only", "dumbbell-10m:15")
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout)
    assert len(records) == 1
    record = records[0]
    # The median of three runs (by wall time) is the one reported.
    assert record["repeats"] == 3 and len(record["wall_s_all"]) == 3
    assert record["wall_s"] == sorted(record["wall_s_all"])[1]
    assert set(KEYS) <= set(record)
    assert record["scenario"] == "dumbbell-10m"
    assert record["n_flows"] == 15
    for key in KEYS[2:]:
        assert record[key] > 0, key
    # 15 flows on 10 Mb/s: nearly all of it is goodput.
    assert 5 < record["goodput_mbps"] <= 10


def test_bench_rejects_unknown_case() -> None:
    assert_one_line_error(invoke("bench", "--only", "nosuch"), "nosuch")
    assert_one_line_error(invoke("bench", "--repeat", "0"), "repeat (0)")
