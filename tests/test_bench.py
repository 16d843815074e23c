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


@pytest.mark.parametrize(
    "case", [c for c in bench.CASES if c.scenario != "engine-queue"], ids=lambda c: c.label
)
def test_bench_scenarios_are_valid(case: bench.Case) -> None:
    for smoke in (False, True):
        normalized = json.loads(
            _core.normalize(json.dumps(bench.scenario(case.scenario, case.n, smoke=smoke)))
        )
        # link-1g has no warm-up, so that its links table covers the whole run
        assert normalized["duration_s"] > normalized["warmup_s"] >= 0
        assert (normalized["warmup_s"] == 0) == (case.scenario == "link-1g")
    with pytest.raises(ValueError, match="no scenario"):
        bench.scenario("engine-queue")


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
    assert bench.parse_case("conns-1e5") == [bench.Case("conns-1e5", 100_000)]
    assert bench.parse_case("engine-queue:64") == [bench.Case("engine-queue", 64)]
    assert bench.parse_case("run-overhead") == [bench.Case("run-overhead", 15)]
    for bad in (
        "nosuch",
        "dumbbell-10m:x",
        "dumbbell-10m:0",
        "web-100m:3",
        "link-1g:2",
        "engine-queue:0",
        "conns-1e5:0",
    ):
        with pytest.raises(ValueError):
            bench.parse_case(bad)


def test_peer_cases_are_the_dumbbell_10m_cases() -> None:
    peers = bench.peer_cases(bench.CASES)
    assert [(c.scenario, c.n, c.simulator) for c in peers] == [
        ("dumbbell-10m", n, "ns2") for n in (15, 60, 240)
    ]
    assert peers[0].label == "dumbbell-10m:15 (ns2)"
    assert bench.peer_cases(bench.parse_case("web-100m")) == []
    with pytest.raises(ValueError):
        bench.peer_cases(bench.CASES, "ns3")


def test_conns_case_opens_every_connection_in_the_first_half() -> None:
    s = bench.scenario("conns-1e5")
    (w,) = s["workloads"]
    assert w["kind"] == "bulk" and w["flows"] == 100_000 and w.get("bytes") is None
    assert w.get("start_s", 0.0) == 0.0
    assert w["start_jitter_s"] <= s["duration_s"] / 2
    assert bench.scenario("conns-1e5", 500)["workloads"][0]["flows"] == 500


def test_link_case_has_no_tcp_and_saturates_its_link() -> None:
    s = bench.scenario("link-1g")
    (w,) = s["workloads"]
    assert w["kind"] == "packet_source"
    offered_bps = w["rate_pps"] * w["size_bytes"]["value"] * 8
    assert offered_bps > s["topology"]["bottleneck"]["rate_bps"]


def test_toml_text_round_trips_a_scenario() -> None:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib

    s = bench.scenario("dumbbell-10m", 4)
    s["name"] = 'a "quoted" name'
    assert tomllib.loads(bench.toml_text(s)) == s
    assert tomllib.loads(bench.toml_text(bench.scenario("web-100m"))) == bench.scenario("web-100m")
    with pytest.raises(ValueError):
        bench.toml_text({"x": float("nan")})


def test_relate_adds_the_ratios() -> None:
    records = [
        {"kind": "simulation", "scenario": "dumbbell-10m", "n_flows": 15,
         "events_per_s": 4e6, "bottleneck_pkts_per_s": 1e6},
        {"kind": "simulation", "scenario": "link-1g", "n_flows": 0,
         "events_per_s": 6e6, "bottleneck_pkts_per_s": 2e6},
        {"kind": "engine", "scenario": "engine-queue", "events_per_s": 16e6},
        {"kind": "ns2", "scenario": "dumbbell-10m", "n_flows": 15, "bottleneck_pkts_per_s": 1e5},
        {"kind": "ns2", "scenario": "dumbbell-10m", "n_flows": 60, "bottleneck_pkts_per_s": 1e5},
    ]
    bench.relate(records)
    assert records[0]["of_engine_events"] == pytest.approx(0.25)
    assert records[0]["of_link_pkts"] == pytest.approx(0.5)
    assert "of_engine_events" not in records[1]
    assert records[3]["ecnlab_ratio"] == pytest.approx(10)
    assert "ecnlab_ratio" not in records[4]  # no ecnlab record at N = 60


def test_engine_reference_in_a_subprocess() -> None:
    records = bench.run_cases([bench.Case("engine-queue", 100)], smoke=True, repeat=1)
    (r,) = records
    assert set(bench.ENGINE_KEYS) <= set(r)
    assert r["pending_events"] == 100 and r["events"] == bench.ENGINE_STEPS // 10
    assert r["events_per_s"] == pytest.approx(r["events"] / r["wall_s"])


def test_hold_benchmark_pops_in_a_fixed_order() -> None:
    seconds, check = _core.hold_benchmark(200, 10_000, 5)
    assert seconds > 0
    assert _core.hold_benchmark(200, 10_000, 5)[1] == check
    assert _core.hold_benchmark(200, 10_000, 6)[1] != check
    with pytest.raises(ValueError):
        _core.hold_benchmark(0, 10, 1)


def test_link_memory_and_overhead_cases_smoke() -> None:
    cases = [
        bench.Case("link-1g"),
        bench.Case("conns-1e5", 2000),
        bench.Case("run-overhead", 3),
        bench.Case("dumbbell-10m", 3),
    ]
    link, conns, overhead, dumbbell = bench.run_cases(cases, smoke=True, repeat=1)
    # the link: packets but no TCP, at most its capacity
    assert set(KEYS) <= set(link) and link["goodput_mbps"] == 0
    assert 0 < link["bottleneck_pkts"] <= 1e9 / 8000 * 1.0 + 1
    assert link["bottleneck_pkts_per_s"] == pytest.approx(link["bottleneck_pkts"] / link["wall_s"])
    # memory: every connection is open (none completes), some have sent
    assert set(bench.MEMORY_KEYS) <= set(conns)
    assert conns["open_conns"] == 2000 and 0 < conns["sending_conns"] <= 2000
    assert conns["peak_rss_mb"] > conns["baseline_rss_mb"]
    assert conns["kb_per_conn"] == pytest.approx(
        (conns["peak_rss_mb"] - conns["baseline_rss_mb"]) * 1024 / 2000
    )
    # the command costs more than its run
    assert set(bench.OVERHEAD_KEYS) <= set(overhead)
    assert 0 < overhead["core_s"] < overhead["wall_s"]
    assert overhead["overhead_s"] == pytest.approx(overhead["wall_s"] - overhead["core_s"])
    # the simulation records are related to the link's
    assert dumbbell["of_link_pkts"] == pytest.approx(
        dumbbell["bottleneck_pkts_per_s"] / link["bottleneck_pkts_per_s"]
    )


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


def test_bench_table_shows_every_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    records = [
        {"kind": "simulation", "scenario": "dumbbell-10m", "n_flows": 15, "events_per_s": 4e6,
         "bottleneck_pkts_per_s": 1e6, "sim_s_per_wall_s": 900.0, "peak_rss_mb": 24.0,
         "goodput_mbps": 9.5, "of_engine_events": 0.25, "of_link_pkts": 0.5},
        {"kind": "engine", "scenario": "engine-queue", "pending_events": 450,
         "events_per_s": 16e6},
        {"kind": "ns2", "scenario": "dumbbell-10m", "n_flows": 15,
         "bottleneck_pkts_per_s": 2.27e5, "wall_s": 0.5, "cpu_s": 0.4, "setup_s": 0.2,
         "pkts_per_s_after_setup": 4e5, "ecnlab_ratio": 4.4},
        {"kind": "simulation", "scenario": "conns-1e5", "n_flows": 100_000, "open_conns": 100_000,
         "sending_conns": 99_000, "peak_rss_mb": 340.0, "baseline_rss_mb": 16.0,
         "kb_per_conn": 3.3, "events_per_s": 1e6, "bottleneck_pkts_per_s": 1e5,
         "sim_s_per_wall_s": 0.2, "goodput_mbps": 5000.0},
        {"kind": "command", "scenario": "run-overhead", "n_flows": 15, "wall_s": 1.0,
         "core_s": 0.1, "overhead_s": 0.9, "peak_rss_mb": 150.0},
    ]
    from ecnlab.cli import bench_tables

    tables = bench_tables(records)
    assert len(tables) == 5
    assert [len(t.rows) for t in tables] == [1, 1, 1, 1, 1]
    assert "ns-2" in str(tables[2].title) and "memory" in str(tables[3].title)


def test_peers_without_ns2_say_so_and_run_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    result = invoke(
        "bench", "--smoke", "--json", "--repeat", "1", "--peers", "--only", "dumbbell-10m:3"
    )
    assert result.exit_code == 0, result.output
    assert "ns-2 not found" in result.stderr
    (record,) = json.loads(result.stdout)
    assert record["kind"] == "simulation"


def test_peers_run_ns2_and_relate_to_it(ns2: str) -> None:
    result = invoke(
        "bench", "--smoke", "--json", "--repeat", "1", "--peers", "--only", "dumbbell-10m:3"
    )
    assert result.exit_code == 0, result.output
    ours, ns2 = json.loads(result.stdout)
    assert set(bench.PEER_KEYS) <= set(ns2)
    assert ns2["simulator"] == "ns2" and ns2["n_flows"] == 3
    assert ns2["setup_s"] > 0 and ns2["cpu_s"] > 0
    # the same flows on the same bottleneck for the same time: about the same packets
    ecnlab_pkts = ours["bottleneck_pkts_per_s"] * ours["wall_s"]
    assert ns2["bottleneck_data_pkts"] == pytest.approx(ecnlab_pkts, rel=0.2)
    assert ns2["ecnlab_ratio"] == pytest.approx(
        ours["bottleneck_pkts_per_s"] / ns2["bottleneck_pkts_per_s"]
    )
