"""ecnlab.run on real small simulations: tables, columns, summary, determinism."""

from __future__ import annotations

import copy
import math
from typing import Any

import ecnlab
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from conftest import EXAMPLES, SMALL, assert_tables_identical, table_values

KINDS = ("syn", "synack", "ack", "data", "retx", "fin", "other")

# docs/results.md: column -> expected type ("int", "float", "bool", "str")
COLUMNS: dict[str, dict[str, str]] = {
    "exchanges": {
        "exchange": "int",
        "flow": "int",
        "workload": "int",
        "seq_in_flow": "int",
        "client": "int",
        "server": "int",
        "start_s": "float",
        "end_s": "float",
        "response_time_s": "float",
        "request_bytes": "int",
        "response_bytes": "int",
        "rtt_ms": "float",
        "ecn": "bool",
        "syn_retx": "int",
        "synack_retx": "int",
        "rtos": "int",
        "completed": "bool",
    },
    "flows": {
        "flow": "int",
        "workload": "int",
        "client": "int",
        "server": "int",
        "kind": "str",
        "start_s": "float",
        "end_s": "float",
        "completed": "bool",
        "rtt_ms": "float",
        "rwnd_bytes": "int",
        "ecn": "bool",
        "bytes_sent": "int",
        "retx_bytes": "int",
        "goodput_bytes": "int",
        "throughput_bytes": "int",
        "retx_received_bytes": "int",
        "delivered_bytes": "int",
        "drops": "int",
        "marks": "int",
        "rtos": "int",
        "syn_retx": "int",
        "synack_retx": "int",
        "exchanges": "int",
    },
    "links": {
        "link": "str",
        "t_start_s": "float",
        "t_end_s": "float",
        "arrivals_pkts": "int",
        "delivered_pkts": "int",
        "delivered_bytes": "int",
        "utilization": "float",
        "drops": "int",
        "marks": "int",
        "drops_early": "int",
        "drops_forced": "int",
        "drops_overflow": "int",
        "marks_early": "int",
        "marks_forced": "int",
        **{f"drops_{k}": "int" for k in KINDS},
        **{f"marks_{k}": "int" for k in KINDS},
        "random_losses": "int",
        "mean_queue_pkts": "float",
        "mean_queue_bytes": "float",
    },
    "queue_counts": {
        "link": "str",
        "kind": "str",
        "outcome": "str",
        "reason": "str",
        "packets": "int",
    },
    "queue_samples": {
        "link": "str",
        "t_s": "float",
        "queue_pkts": "int",
        "queue_bytes": "int",
    },
    "aqm_samples": {
        "link": "str",
        "t_s": "float",
        "variable": "str",
        "value": "float",
    },
    "sojourn": {
        "link": "str",
        "bin_start_ms": "float",
        "bin_end_ms": "float",
        "packets": "int",
    },
    "flow_samples": {
        "t_s": "float",
        "flow": "int",
        "cwnd_bytes": "int",
        "ssthresh_bytes": "float",
        "srtt_ms": "float",
        "delivered_bytes": "int",
    },
}

SUMMARY_KEYS = (
    "events",
    "wall_s",
    "sim_s",
    "warmup_s",
    "window_s",
    "exchanges_started",
    "exchanges_completed",
    "flows_started",
    "flows_completed",
    "utilization_down",
    "utilization_up",
    "goodput_bps",
    "normalized_throughput",
    "loss_rate_down",
    "loss_rate_up",
    "mark_rate_down",
    "mark_rate_up",
    "mean_queue_pkts_down",
    "mean_queue_pkts_up",
    "bottleneck_data_pkts",
    "mean_response_time_s",
)

_TYPE_CHECKS = {
    "int": pa.types.is_integer,
    "float": pa.types.is_floating,
    "bool": pa.types.is_boolean,
    "str": lambda t: pa.types.is_string(t) or pa.types.is_large_string(t),
}


def test_returns_every_table(small_result: ecnlab.Result) -> None:
    assert set(small_result.tables) == set(ecnlab.TABLES)
    for name in ecnlab.TABLES:
        table = getattr(small_result, name)
        assert table is small_result.tables[name]
        # DropTail has no control variables to sample; flow samples are off by default.
        if name not in ("aqm_samples", "flow_samples"):
            assert table.num_rows > 0, f"{name} is empty"


@pytest.mark.parametrize("name", list(COLUMNS))
def test_documented_columns_and_types(small_result: ecnlab.Result, name: str) -> None:
    schema = small_result.tables[name].schema
    missing = [c for c in COLUMNS[name] if c not in schema.names]
    assert not missing, f"{name} lacks documented columns {missing}"
    for column, kind in COLUMNS[name].items():
        assert _TYPE_CHECKS[kind](schema.field(column).type), (
            f"{name}.{column} is {schema.field(column).type}, documented as {kind}"
        )


def test_summary(small_result: ecnlab.Result) -> None:
    s = small_result.summary
    missing = [k for k in SUMMARY_KEYS if k not in s]
    assert not missing, f"summary lacks {missing}"
    assert s["wall_s"] > 0
    assert s["events"] > 0
    assert s["sim_s"] == pytest.approx(3.0)
    assert s["window_s"] == pytest.approx(2.5)
    assert 0 < s["utilization_down"] <= 1.0 + 1e-9
    assert s["goodput_bps"] > 0
    assert s["exchanges_started"] >= s["exchanges_completed"] > 0
    assert s["bottleneck_data_pkts"] > 0


def test_scenario_is_normalized(small_result: ecnlab.Result) -> None:
    scenario = small_result.scenario
    assert scenario["name"] == "test-small"
    assert scenario["duration_s"] == 3.0
    # Defaults filled in by the core (docs/scenario.md).
    assert scenario["topology"]["access_rate_bps"] == 1e9
    assert scenario["metrics"]["queue_sample_ms"] == 10
    assert small_result.seed == 1


def test_tables_are_consistent(small_result: ecnlab.Result) -> None:
    ex = small_result.exchanges.to_pylist()
    flows = {f["flow"]: f for f in small_result.flows.to_pylist()}
    for e in ex:
        assert e["flow"] in flows
        assert e["start_s"] >= 0.5 - 1e-9, "exchanges start in the window"
        if e["completed"]:
            assert e["response_time_s"] == pytest.approx(e["end_s"] - e["start_s"])
            assert e["response_time_s"] > e["rtt_ms"] / 1000
        else:
            assert math.isnan(e["response_time_s"])
    kinds = {f["kind"] for f in flows.values()}
    assert kinds == {"bulk", "exchanges"}

    links = small_result.links
    assert set(links.column("link").to_pylist()) == {"bottleneck_down", "bottleneck_up"}
    # 2.5 s window in 0.5 s intervals, per direction.
    assert links.num_rows == 2 * 5
    assert pc.min(links.column("t_start_s")).as_py() == pytest.approx(0.5)
    assert pc.max(links.column("t_end_s")).as_py() == pytest.approx(3.0)
    # The 30-packet queue overflows under two bulk flows.
    counts = small_result.queue_counts.to_pylist()
    assert any(c["outcome"] == "dropped" and c["reason"] == "overflow" for c in counts)
    assert all(c["packets"] > 0 for c in counts)


def test_to_pandas(small_result: ecnlab.Result) -> None:
    df = small_result.to_pandas("flows")
    assert len(df) == small_result.flows.num_rows
    assert list(df.columns) == small_result.flows.column_names
    with pytest.raises(KeyError, match="nosuch"):
        small_result.to_pandas("nosuch")


def test_same_seed_gives_identical_tables(small_result: ecnlab.Result, small: dict) -> None:
    again = ecnlab.run(small, seed=1, progress=False)
    assert_tables_identical(small_result.tables, again.tables)
    assert _without_wall(again.summary) == _without_wall(small_result.summary)


def _without_wall(summary: dict[str, Any]) -> dict[str, Any]:
    # Wall times differ between runs (the core reports its own too, e.g. wall_s_core); NaN
    # (a mean over nothing) would not compare equal to itself.
    return {
        k: "NaN" if isinstance(v, float) and math.isnan(v) else v
        for k, v in summary.items()
        if not k.startswith("wall_s")
    }


def test_different_seeds_give_different_tables(small_result: ecnlab.Result, small: dict) -> None:
    other = ecnlab.run(small, seed=2, progress=False)
    assert table_values(other.flows) != table_values(small_result.flows)
    assert table_values(other.exchanges) != table_values(small_result.exchanges)


def test_run_accepts_a_toml_path_and_chunking_does_not_matter(tmp_path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        "duration_s = 1\n[topology.bottleneck]\nrate_bps = 5e6\n"
        '[[workloads]]\nkind = "bulk"\nflows = 1\n'
    )
    a = ecnlab.run(path, seed=3, progress=False, chunk_s=0.013)
    b = ecnlab.run(ecnlab.load_scenario(path), seed=3, progress=False)
    assert_tables_identical(a.tables, b.tables)
    assert a.summary["events"] == b.summary["events"]


def test_progress_bar_does_not_change_results(small: dict) -> None:
    small["duration_s"] = 1.0
    a = ecnlab.run(small, seed=5, progress=True, chunk_s=0.1)
    b = ecnlab.run(small, seed=5, progress=False)
    assert_tables_identical(a.tables, b.tables)


def test_a_run_that_outgrows_its_budget_stops_with_the_sizes(
    small: dict, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    from ecnlab import _run
    from ecnlab.bench import toml_text
    from ecnlab.cli import app
    from typer.testing import CliRunner

    # Within the budget (its real growth is a few MB), the run completes.
    assert ecnlab.run(small, progress=False, memory_budget="1GB").summary["events"] > 0
    # The process appears to grow by 10 GB once the simulation is built: the first call into
    # the core that ends beyond the budget stops the run, and nothing of it is returned.
    calls = iter(range(10**6))
    monkeypatch.setattr(_run, "_resident_bytes", lambda: 1e8 + (1e10 if next(calls) else 0))
    with pytest.raises(MemoryError) as e:
        ecnlab.run(small, progress=False, memory_budget="1GB")
    message = str(e.value)
    assert "outgrew its memory budget of 1.0 GB" in message
    assert "grew by 10.0 GB in its first " in message and "of 3 simulated s" in message
    assert "docs/scenario.md" in message
    # The command line says so, exits with a failure, and writes nothing.
    calls = iter(range(10**6))
    scenario = tmp_path / "small.toml"
    scenario.write_text(toml_text(small))
    out = tmp_path / "out"
    r = CliRunner().invoke(
        app, ["run", str(scenario), "--out", str(out), "--memory-budget", "1GB", "-q"]
    )
    assert r.exit_code == 1, r.output
    assert "outgrew its memory budget" in r.output and not out.exists()


def test_bad_seed(small: dict) -> None:
    with pytest.raises(ValueError, match="seed"):
        ecnlab.run(small, seed=-1, progress=False)
    with pytest.raises(TypeError, match="seed"):
        ecnlab.run(small, seed=1.5, progress=False)  # type: ignore[arg-type]


def test_mm1_example_matches_queueing_theory() -> None:
    # Poisson arrivals, exponential sizes, load 0.8: mean waiting queue 3.2 packets.
    # 4 s of simulation (40k packets) keeps the test fast; the tolerance is loose.
    scenario = ecnlab.load_scenario(EXAMPLES / "mm1.toml", ["duration_s=4", "warmup_s=0.5"])
    result = ecnlab.run(scenario, seed=1, progress=False)
    s = result.summary
    assert s["utilization_down"] == pytest.approx(0.8, rel=0.05)
    assert s["mean_queue_pkts_down"] == pytest.approx(3.2, rel=0.3)
    assert s["loss_rate_down"] == 0
    assert s["flows_started"] == 0


def test_native_string_columns_decode_and_reject_bad_codes() -> None:
    from ecnlab._result import tables_from_native

    codes = bytes([0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0])
    table = tables_from_native({"t": {"link": ("dict", ["up", "down"], codes)}})["t"]
    assert table.column("link").to_pylist() == ["up", "down", "up"]
    assert str(table.schema.field("link").type) == "string"
    with pytest.raises(RuntimeError, match="outside its dictionary"):
        tables_from_native({"t": {"link": ("dict", ["up"], codes)}})
    with pytest.raises(RuntimeError, match="multiple of 4"):
        tables_from_native({"t": {"link": ("dict", ["up"], b"\0\0\0")}})


def test_core_hands_the_tables_over_once_and_keeps_its_clock_and_summary(small: dict) -> None:
    import json

    from ecnlab import _core
    from ecnlab._result import tables_from_native

    sim = _core.Simulation(json.dumps(small), 1)
    with pytest.raises(RuntimeError, match="call results"):
        sim.summary()
    sim.run_until(sim.end_ns // 2)
    now, events = sim.now_ns, sim.events
    assert 0 < now <= sim.end_ns // 2 and events > 0
    tables = tables_from_native(sim.results())
    # The simulation is gone; what a caller reads after the tables stays as it was.
    assert (sim.now_ns, sim.events, sim.end_ns) == (now, events, 3_000_000_000)
    summary = sim.summary()
    assert summary["events"] == events
    assert tables["flows"].num_rows == summary["flows_started"] > 0
    with pytest.raises(RuntimeError, match="handed over once"):
        sim.results()
    with pytest.raises(RuntimeError, match="finalized"):
        sim.run_until(sim.end_ns)


def test_every_public_name_resolves_and_open_is_not_one() -> None:
    # ecnlab.open would shadow the builtin: the sweep reader is ecnlab.open_results only.
    for name in ecnlab.__all__:
        assert getattr(ecnlab, name) is not None, name
    assert "open" not in ecnlab.__all__
    with pytest.raises(AttributeError, match="open_results"):
        ecnlab.open  # noqa: B018


def test_aqm_variables_keeps_the_named_variables_and_refuses_unknown_names() -> None:
    scenario = copy.deepcopy(SMALL)
    scenario["topology"]["bottleneck"]["queue"]["aqm"] = {"kind": "pie"}
    every = ecnlab.run(scenario, seed=2, progress=False)
    scenario["metrics"]["aqm_variables"] = ["qdelay_ms", "avg"]  # `avg` is RED's: allowed
    some = ecnlab.run(scenario, seed=2, progress=False)
    assert set(every.aqm_samples.column("variable").to_pylist()) == {"p", "qdelay_ms", "burst_ms"}
    assert set(some.aqm_samples.column("variable").to_pylist()) == {"qdelay_ms"}
    kept = every.aqm_samples.filter(pc.equal(every.aqm_samples.column("variable"), "qdelay_ms"))
    assert table_values(kept) == table_values(some.aqm_samples)
    assert table_values(every.flows) == table_values(some.flows)
    scenario["metrics"]["aqm_variables"] = ["qdelay"]
    message = r'metrics\.aqm_variables\[0\] \("qdelay"\) is not a variable of any AQM; known: avg, '
    with pytest.raises(ValueError, match=message):
        ecnlab.run(scenario, seed=2, progress=False)
