"""The ns-2 translator, its refusals, the reading of ns-2's outputs and ``ecnlab crosscheck ns2``.

The cross-validation itself (ns-2 against ecnlab on named measures) is tests/crosscheck/.
"""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import ecnlab
import pyarrow.parquet as pq
import pytest
from conftest import EXAMPLES, assert_one_line_error, invoke
from ecnlab.crosscheck import Ns2Error, Untranslatable, check, measures, run_ns2, translate
from ecnlab.crosscheck.ns2tables import _classify, _queue_steps, _time_average, read_trace
from ecnlab.crosscheck.run import bulk_flows, normalized
from ecnlab.reproduce.ecn_plus import _response_measures

BASE: dict[str, Any] = {
    "name": "xc-unit",
    "duration_s": 4.0,
    "warmup_s": 1.0,
    "topology": {
        "clients": 2,
        "servers": 2,
        "access_rate_bps": 100e6,
        "bottleneck": {"rate_bps": 10e6, "delay_ms": 5, "queue": {"limit_pkts": 40}},
    },
    "workloads": [
        {"kind": "bulk", "flows": 2, "rtt_ms": {"dist": "uniform", "low": 20, "high": 60}},
        {
            "kind": "exchanges",
            "arrival_rate_per_s": 20,
            "response_bytes": {"dist": "exponential", "mean": 5000},
            "rtt_ms": {"dist": "uniform", "low": 20, "high": 80},
        },
    ],
}


def scenario(*overrides: str) -> dict[str, Any]:
    return normalized(copy.deepcopy(BASE), overrides)


# --- refusals -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ['topology.bottleneck.queue.aqm={ kind = "codel" }'],
            'topology.bottleneck.queue.aqm.kind = "codel": ns-2.35 has no CoDel',
        ),
        (['topology.bottleneck.queue.aqm={ kind = "pie" }'], "ns-2.35 has no PIE"),
        (['topology.bottleneck.queue.aqm={ kind = "pi2" }'], "ns-2.35 has no PI2"),
        (['topology.bottleneck.queue.aqm={ kind = "dualpi2" }'], "ns-2.35 has no DualPI2"),
        (
            ['topology.bottleneck.queue.aqm={ kind = "red", above_max = "ecnm", ecn = true }'],
            'topology.bottleneck.queue.aqm.above_max = "ecnm"',
        ),
        (
            ['topology.bottleneck.queue.aqm={ kind = "ared", ecn = true }'],
            'topology.bottleneck.queue.aqm.above_max = "drop": ns-2.35\'s gentle RED stops',
        ),
        (
            ['topology.bottleneck.queue.aqm={ kind = "rem", ecn = true }'],
            "topology.bottleneck.queue.aqm.mark_on_dequeue = false",
        ),
        (
            ['topology.bottleneck.queue.aqm={ kind = "rem", alpha = 0.2 }'],
            "aqm.alpha = 0.2: ns-2.35's REM has alpha fixed at 0.1",
        ),
        (
            ['topology.bottleneck.queue.aqm={ kind = "red", byte_mode = true }'],
            "topology.bottleneck.queue.aqm.byte_mode = true",
        ),
        (["topology.bottleneck.random_loss=0.01"], "topology.bottleneck.random_loss = 0.01"),
        (['tcp.congestion_control="cubic"'], 'tcp.congestion_control = "cubic"'),
        (
            ['tcp.congestion_control="dctcp"'],
            'tcp.congestion_control = "dctcp": ns-2.35 has no DCTCP',
        ),
        (['tcp.congestion_control="prague"'], 'tcp.congestion_control = "prague": ns-2.35'),
        (['tcp.ect_codepoint="ect1"', "tcp.ecn=true"], 'tcp.ect_codepoint = "ect1"'),
        (["tcp.abe=true", "tcp.ecn=true"], "tcp.abe = true: ns-2.35 has no ABE"),
        (["tcp.abc=true"], "tcp.abc = true"),
        (['tcp.hystart="rfc9406"'], 'tcp.hystart = "rfc9406": ns-2.35\'s FullTcp has no HyStart'),
        (["tcp.beta=0.7"], "tcp.beta = 0.7"),
        (
            ['tcp.timeout_ssthresh="once_per_window"'],
            'tcp.timeout_ssthresh = "once_per_window": ns-2.35\'s FullTcp halves cwnd',
        ),
        (['tcp.ecn_plus="seed"', "tcp.ecn=true"], 'tcp.ecn_plus = "seed"'),
        (
            ["tcp.ect_fins=true", "tcp.ecn=true"],
            "tcp.ect_fins = true: ns-2.35's FullTcp sends SYNs, pure ACKs and FINs Not-ECT",
        ),
        (
            ['tcp.ecn_feedback="accecn"', "tcp.ecn=true"],
            'tcp.ecn_feedback = "accecn": ns-2.35\'s FullTcp has RFC 3168\'s ECE/CWR feedback only',
        ),
        (["tcp.clients.ecn_fraction=0.5"], "tcp.clients.ecn_fraction = 0.5"),
        (
            ['workloads.1.rtt_ms={ dist = "bounded_pareto", low = 20, high = 200, shape = 1.1 }'],
            (
                'workloads.1.rtt_ms = { dist = "bounded_pareto", low = 20.0, high = 200.0, '
                "shape = 1.1 }: DelayBox"
            ),
        ),
        (["tcp.header_bytes=52"], "tcp.header_bytes = 52: ns-2's DelayBox"),
        (['tcp.rto_estimator="linux"'], 'tcp.rto_estimator = "linux"'),
        (['tcp.delayed_ack_policy="linux"'], 'tcp.delayed_ack_policy = "linux"'),
        (
            ['tcp.profile="freebsd"', "tcp.abc=false", "tcp.limited_transmit=false", "tcp.sack=false"],
            'tcp.rto_estimator = "freebsd"',
        ),
    ],
)
def test_refusals_name_the_field(overrides: list[str], message: str) -> None:
    with pytest.raises(Untranslatable) as e:
        check(scenario(*overrides))
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_web_and_packmime_refusals() -> None:
    web = copy.deepcopy(BASE)
    web["workloads"] = [{"kind": "web_sessions", "session_rate_per_s": 1}]
    with pytest.raises(Untranslatable, match=r"workloads\.0\.pages_per_site = .*picks a new"):
        check(normalized(web))
    web["workloads"][0]["pages_per_site"] = {"dist": "constant", "value": 1}
    check(normalized(web))  # the rest of the default web model translates
    with pytest.raises(Untranslatable, match=r'inter_page_from = "start"'):
        check(normalized(web, ['workloads.0.inter_page_from="start"']))
    pm = copy.deepcopy(BASE)
    pm["workloads"] = [{"kind": "packmime_http", "rate_per_s": 5}]
    check(normalized(pm))
    with pytest.raises(Untranslatable, match=r"workloads\.0\.p_persistent = 0\.2"):
        check(normalized(pm, ["workloads.0.p_persistent=0.2"]))
    with pytest.raises(Untranslatable, match=r"tcp\.clients\.initial_window_segments = 4"):
        check(normalized(pm, ["tcp.clients.initial_window_segments=4"]))
    browsers = copy.deepcopy(BASE)
    browsers["workloads"] = [{"kind": "tpcw_browsers", "browsers": 5}]
    with pytest.raises(Untranslatable, match=r'workloads\.0\.kind = "tpcw_browsers"'):
        check(normalized(browsers))


def test_cli_refusal_is_one_line() -> None:
    result = invoke(
        "crosscheck",
        "ns2",
        str(EXAMPLES / "red-dumbbell.toml"),
        "--set",
        'topology.bottleneck.queue.aqm={ kind = "codel" }',
    )
    assert_one_line_error(
        result, 'topology.bottleneck.queue.aqm.kind = "codel": ns-2.35 has no CoDel'
    )


# --- the script ---------------------------------------------------------------------------


def _script(s: dict[str, Any], seed: int = 1) -> str:
    flows = bulk_flows(ecnlab.run(s, seed=seed, progress=False))
    return translate(s, seed, flows).script


def _set(script: str, name: str) -> list[str]:
    """The values given to variable ``name`` by ``X set name value`` lines."""
    return re.findall(rf"set {re.escape(name)} (\S+)", script)


def test_same_scenario_and_seed_give_the_same_script() -> None:
    s = scenario()
    assert _script(s, 3) == _script(s, 3)
    a, b = _script(s, 3), _script(s, 4)
    assert a != b
    assert "$defaultRNG seed 4 " in a and "$defaultRNG seed 5 " in b


def test_red_and_tcp_parameters_are_explicit() -> None:
    s = normalized(EXAMPLES / "red-dumbbell.toml", ["duration_s=3", "warmup_s=1"])
    script = _script(s)
    for name, value in [
        ("thresh_", "20.0"),
        ("maxthresh_", "80.0"),
        ("linterm_", "10.0"),
        ("q_weight_", "0.002"),
        ("bytes_", "false"),
        ("queue_in_bytes_", "false"),
        ("mean_pktsize_", "1500"),
        ("gentle_", "true"),
        ("setbit_", "true"),
        ("use_mark_p_", "true"),
        ("mark_p_", "2.0"),  # above_max = "mark": every signal to an ECT packet is a mark
        ("limit_", "250"),
    ]:
        assert value in _set(script, name), (name, _set(script, name))
    for name, value in [
        ("segsize_", "1460"),
        ("windowInit_", "3"),
        ("rtxcur_init_", "1.0"),
        ("minrto_", "1.0"),
        ("segsperack_", "2"),
        ("interval_", "0.2"),
        ("ecn_", "1"),
        ("nodelay_", "true"),
        ("tcpTick_", "0.001"),
        ("slow_start_restart_", "false"),  # ecnlab has no restart after idle
    ]:
        assert value in _set(script, name), (name, _set(script, name))
    # bulk flows keep ecnlab's RTTs: a leaf link of half the extra delay each
    assert script.count("set leaf(") == 20


@pytest.mark.parametrize(
    ("option", "fulltcp", "says"),
    [("rto_backoff_end", "new_ack", "every ACK of new data"), ("loss_response", "ns2", "4.4BSD")],
)
def test_tcp_note_only_where_ecnlab_differs_from_fulltcp(option: str, fulltcp: str, says: str) -> None:
    """The translation notes FullTcp's timer backoff and answer to a loss unless ecnlab's
    option already models them."""

    def notes(extra: list[str]) -> list[str]:
        s = normalized(EXAMPLES / "red-dumbbell.toml", ["duration_s=3", "warmup_s=1", *extra])
        flows = bulk_flows(ecnlab.run(s, seed=1, progress=False))
        return [n for n in translate(s, 1, flows).notes if f"{option} = " in n]

    assert len(notes([])) == 1 and says in notes([])[0]
    assert notes([f"tcp.{option}={fulltcp}"]) == []


def test_close_note_only_for_request_response_workloads() -> None:
    def notes(s: dict[str, Any]) -> list[str]:
        flows = bulk_flows(ecnlab.run(s, seed=1, progress=False))
        return [n for n in translate(s, 1, flows).notes if "own FIN" in n]

    assert len(notes(scenario())) == 1
    bulk_only = copy.deepcopy(BASE)
    bulk_only["workloads"] = bulk_only["workloads"][:1]
    assert notes(normalized(bulk_only)) == []


@pytest.mark.parametrize(
    ("aqm", "use_mark_p", "mark_p"),
    [
        ('{ kind = "red", ecn = true, above_max = "drop", max_p = 0.2 }', "true", "0.2"),
        ('{ kind = "red", ecn = true, above_max = "drop", gentle = false }', "false", "0.1"),
        ('{ kind = "red", ecn = true, above_max = "mark" }', "true", "2.0"),
    ],
)
def test_above_max_translation(aqm: str, use_mark_p: str, mark_p: str) -> None:
    script = translate(scenario(f"topology.bottleneck.queue.aqm={aqm}"), 1).script
    assert _set(script, "use_mark_p_")[-2:] == [use_mark_p] * 2
    assert _set(script, "mark_p_")[-2:] == [mark_p] * 2


@pytest.mark.parametrize(
    ("aqm", "limit"),
    [
        ('{ kind = "droptail" }', "41"),
        ('{ kind = "red" }', "40"),
        ('{ kind = "rem" }', "41"),
        ('{ kind = "pi", q_ref_pkts = 20 }', "40"),
    ],
)
def test_queue_limits_follow_each_ns2_queue(aqm: str, limit: str) -> None:
    """ecnlab's limit_pkts counts waiting packets; ns-2.35's DropTail and REM keep one fewer
    than limit_ (drop-tail.cc: queue + 1 >= limit_; rem.cc tests the queue with the arrival),
    RED and PI limit_ (they test the queue before the arrival)."""
    script = translate(scenario(f"topology.bottleneck.queue.aqm={aqm}"), 1).script
    assert _set(script, "limit_")[:2] == [limit, limit]


def test_exchange_sizes_use_ns2_rngs_seeded_from_the_run_seed() -> None:
    script = translate(scenario(), 7).script
    assert "ecnlab_exponential $w1_u 5000.0" in script
    assert script.index("$defaultRNG seed") < script.index("[new RNG]")


# --- reading ns-2's outputs ---------------------------------------------------------------

TRACE = """\
+ 1.0 1 0 tcp 40 ------- 5 3.0 2.0 0 1 -1 0x2 40 0
- 1.0 1 0 tcp 40 ------- 5 3.0 2.0 0 1 -1 0x2 40 0
+ 1.1 1 0 tcp 1500 ------N 5 3.0 2.0 1 2 1 0x10 40 0
+ 1.2 1 0 tcp 1500 ------N 5 3.0 2.0 1461 3 1 0x10 40 0
- 1.2 1 0 tcp 1500 ----E-N 5 3.0 2.0 1 2 1 0x10 40 0
+ 1.3 1 0 tcp 1500 ------N 5 3.0 2.0 1 4 1 0x10 40 0
d 1.3 1 0 tcp 1500 ------N 5 3.0 2.0 1 4 1 0x10 40 0
r 1.4 1 0 tcp 1500 ----E-N 5 3.0 2.0 1 2 1 0x10 40 0
+ 1.5 0 1 ack 40 C------ 5 2.0 3.0 0 5 1461 0x12 40 0
"""


def test_trace_classification(tmp_path: Path) -> None:
    path = tmp_path / "bottleneck.tr"
    path.write_text(TRACE)
    t = _classify(read_trace(path))
    assert list(t["ev"]) == ["+", "-", "+", "+", "-", "+", "d", "+"]  # receive lines dropped
    kinds = {"syn": 0, "synack": 1, "ack": 2, "data": 3, "retx": 4}
    assert list(t["kind"]) == [
        kinds[k] for k in ("syn", "syn", "data", "data", "data", "retx", "retx", "synack")
    ]
    assert set(t["link"].iloc[[0, -1]]) == {"bottleneck_down", "bottleneck_up"}
    assert list(t["ce"]) == [False, False, False, False, True, False, False, False]
    down = t[t["link"] == "bottleneck_down"]
    times, q = _queue_steps(down)
    assert list(q) == [1, 0, 1, 2, 1, 2, 1]
    # over [1.0, 1.4): 0 until 1.1, 1 until 1.2, 1 at 1.2 (2 then 1), 1 from 1.3
    assert _time_average(times, q, 1.0, 1.4) == pytest.approx((0.1 * 1 + 0.1 * 1 + 0.1 * 1) / 0.4)


def test_aqm_samples_keep_the_variables_the_scenario_names(tmp_path: Path) -> None:
    from ecnlab.crosscheck.ns2tables import _aqm_samples

    path = tmp_path / "aqm.txt"
    path.write_text("bottleneck_down 1.0 ave_ 3.5\nbottleneck_down 1.0 cur_max_p_ 0.1\n")
    scenario = {"topology": {"bottleneck": {"queue": {"aqm": {"kind": "red"}}}}, "metrics": {}}
    assert _aqm_samples(path, scenario).column("variable").to_pylist() == ["avg", "max_p"]
    scenario["metrics"]["aqm_variables"] = ["max_p"]
    kept = _aqm_samples(path, scenario)
    assert kept.column("variable").to_pylist() == ["max_p"]
    assert kept.column("value").to_pylist() == [0.1]


def test_ns_failure_names_the_script_and_ns_error(tmp_path: Path, ns2: str) -> None:
    with pytest.raises(Ns2Error) as e:
        run_ns2("set x [no_such_command 1]\n", tmp_path / "ns2", ns2)
    text = str(e.value)
    assert str(tmp_path / "ns2" / "scenario.tcl") in text
    assert 'invalid command name "no_such_command"' in text


def test_measures_agree_with_ecnlab_summary() -> None:
    """The comparison computes its measures from the tables; on an ecnlab run they must equal
    the run summary's own values (same definitions on both sides)."""
    s = scenario("duration_s=6")
    r = ecnlab.run(s, seed=2, progress=False)
    m = measures(r.tables, s)
    for name in ("utilization_down", "loss_rate_down", "mean_queue_pkts_down", "utilization_up"):
        assert m[name] == pytest.approx(r.summary[name], rel=1e-9, abs=1e-12), name
    assert m["goodput_mbps"] == pytest.approx(r.summary["goodput_bps"] / 1e6, rel=1e-9)
    assert m["response_time_mean_s"] == pytest.approx(r.summary["mean_response_time_s"], rel=1e-9)
    # seed 000's measure, read as the ecn-plus reproduction reads it (Kaplan-Meier, unfinished
    # exchanges censored)
    ex = r.tables["exchanges"].to_pandas()
    assert m["response_within_0.5s_share"] == pytest.approx(
        _response_measures(ex, 60.0)["f05"] / 100, rel=1e-12
    )


def test_every_seed_comparison_translates() -> None:
    """The seed studies' comparisons (tests/crosscheck/seed_comparisons.py, quoted by the
    write-ups) stay within what the translator expresses; ecn-plus's variant keeps the study's
    load, AQMs and ECN modes."""
    import importlib.util

    path = Path(__file__).parent / "crosscheck" / "seed_comparisons.py"
    spec = importlib.util.spec_from_file_location("seed_comparisons", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for cases in module.CASES.values():
        for sc in cases().values():
            check(normalized(sc))  # raises Untranslatable naming the field
    ep = module.ecn_plus_cases()
    assert len(ep) == 2 * 2 * 3
    red_ecnplus = ep["RED*-ECN+-105"]
    assert red_ecnplus["tcp"]["ecn_plus"] == "rfc5562" and red_ecnplus["tcp"]["ecn"]
    assert red_ecnplus["topology"]["bottleneck"]["queue"]["aqm"]["above_max"] == "mark"
    assert ep["REM-no-ECN-90"]["topology"]["bottleneck"]["queue"]["aqm"]["ecn"] is False
    rates = {n: sc["workloads"][0]["session_rate_per_s"] for n, sc in ep.items()}
    assert rates["RED*-ECN-105"] > rates["RED*-ECN-90"]


# --- the count-only script (ecnlab bench --peers) ------------------------------------------


def _bulk_only(*overrides: str) -> dict[str, Any]:
    s = copy.deepcopy(BASE)
    s["workloads"] = s["workloads"][:1]
    s["tcp"] = {"ecn": True}
    s["topology"]["bottleneck"]["queue"]["aqm"] = {"kind": "red", "ecn": True}
    return normalized(s, overrides)


def test_count_only_refuses_request_response_workloads() -> None:
    with pytest.raises(ValueError, match="workloads.1.kind.*bulk workloads only"):
        translate(scenario(), 1, count_only=True)


def test_count_only_script_has_no_trace_and_no_upcalls() -> None:
    s = _bulk_only()
    flows = bulk_flows(ecnlab.run(s, seed=1, progress=False))
    full = translate(s, 1, flows).script
    count = translate(s, 1, flows, count_only=True).script
    assert "trace-queue" in full and "trace-queue" not in count
    assert "attach-monitors" in count and "attach-monitors" not in full
    assert "ecnlab_aqm_sample" in full and "ecnlab_aqm_sample" not in count
    assert "set ecnlab_count_only 1" in count and "set ecnlab_count_only 0" in full
    # the simulation itself is the same: every line of the full script that sets up the
    # network, TCP and flows is in the count-only script
    setup = [
        x
        for x in full.splitlines()
        if x.startswith(("$ns at ", "$ns duplex", "$q set")) and "ecnlab_aqm" not in x
    ]
    assert len(setup) > 20
    assert [x for x in setup if x not in count.splitlines()] == []


def test_count_only_counts_are_the_traced_packets(tmp_path: Path, ns2: str) -> None:
    """The queue monitors of the count-only script count the packets the full script's trace
    shows leaving the bottleneck queues (the same ns-2 run: tracing only observes), and the
    data packets computed from their bytes are the traced departures with a payload."""
    from ecnlab.crosscheck.ns2tables import bottleneck_data_pkts, read_counts

    s = _bulk_only("duration_s=3")
    result = ecnlab.run(s, seed=2, progress=False)
    flows = bulk_flows(result)
    run_ns2(translate(s, 2, flows).script, tmp_path / "full", ns2)
    run_ns2(translate(s, 2, flows, count_only=True).script, tmp_path / "count", ns2)
    trace = _classify(read_trace(tmp_path / "full" / "bottleneck.tr"))
    counts = read_counts(tmp_path / "count")
    departed = trace[trace["ev"] == "-"]
    assert counts["bottleneck_down"]["pdepartures"] + counts["bottleneck_up"][
        "pdepartures"
    ] == len(departed)
    data = bottleneck_data_pkts(counts, s)
    assert data == int((departed["payload"] > 0).sum()) > 1000


def test_data_packets_from_counts_need_whole_segments() -> None:
    from ecnlab.crosscheck.ns2tables import bottleneck_data_pkts

    s = _bulk_only()
    mss, header = s["tcp"]["mss_bytes"], s["tcp"]["header_bytes"]
    ok = {"pdepartures": 10, "bdepartures": 10 * header + 7 * mss}
    assert bottleneck_data_pkts({"bottleneck_down": ok, "bottleneck_up": ok}, s) == 14
    bad = {"pdepartures": 10, "bdepartures": 10 * header + 7 * mss + 1}
    with pytest.raises(ValueError, match="whole"):
        bottleneck_data_pkts({"bottleneck_down": ok, "bottleneck_up": bad}, s)
    with pytest.raises(ValueError, match="unlimited bulk"):
        bottleneck_data_pkts({"bottleneck_down": ok}, scenario())


# --- end to end ---------------------------------------------------------------------------


def test_crosscheck_red_dumbbell_end_to_end(tmp_path: Path, ns2: str) -> None:
    out = tmp_path / "xc"
    result = invoke(
        "crosscheck",
        "ns2",
        str(EXAMPLES / "red-dumbbell.toml"),
        "--out",
        str(out),
        "--set",
        "duration_s=6",
        "--set",
        "warmup_s=2",
    )
    assert result.exit_code == 0, result.output
    for column in ("measure", "ns-2.35", "ecnlab", "difference", "utilization_down"):
        assert column in result.stdout
    for name in ("flows", "links", "queue_counts", "queue_samples", "aqm_samples", "exchanges"):
        assert (out / "ns2" / f"{name}.parquet").exists(), name
    assert (out / "ecnlab" / "manifest.json").exists()
    assert (out / "comparison.csv").read_text().startswith('"measure","ns2","ecnlab"')
    script = out / "ns2" / "scenario.tcl"
    # the script reruns by hand and gives the same trace (ns-2 seeded from the run seed)
    again = tmp_path / "again"
    again.mkdir()
    shutil.copy(script, again / "scenario.tcl")
    subprocess.run([ns2, "scenario.tcl"], cwd=again, check=True, capture_output=True)
    assert (again / "bottleneck.tr").read_bytes() == (out / "ns2" / "bottleneck.tr").read_bytes()
    ns_flows = pq.read_table(out / "ns2" / "flows.parquet").to_pandas().sort_values("flow")
    ours = pq.read_table(out / "ecnlab" / "flows.parquet").to_pandas().sort_values("flow")
    assert list(ns_flows.columns) == list(ours.columns)
    # the same bulk flows: ecnlab's ids, hosts and RTTs
    for column in ("flow", "client", "server", "rtt_ms"):
        assert list(ns_flows[column]) == list(ours[column]), column
    assert (ns_flows["goodput_bytes"] > 0).all()


def test_crosscheck_refuses_a_full_folder(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("")
    result = invoke(
        "crosscheck", "ns2", str(EXAMPLES / "red-dumbbell.toml"), "--out", str(tmp_path)
    )
    assert_one_line_error(result, "already exists and is not an empty folder")
