"""``ecnlab testbed run`` (docs/testbed.md): a scenario on real Linux TCP, stored as a run.

The refusals and the plan need no root and run everywhere. The runs need root and iproute2's
``ip`` (skipped otherwise, as tests/test_testbed.py): each is a few seconds of
examples/testbed-red.toml, as a child process so its namespaces, router and agents can be
found by its pid and checked gone after it ends, normally, on an error and on Ctrl-C.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import time
from pathlib import Path

import ecnlab
import pytest
from conftest import EXAMPLES, assert_one_line_error, ecnlab_process, invoke
from ecnlab._result import run_id
from ecnlab._testbed_plan import TestbedUnsupported, plan
from ecnlab.testbed import leftover_namespaces
from ecnlab.testbed_run import tables_of

EXAMPLE = str(EXAMPLES / "testbed-red.toml")
# A short run: 4 s, of which 1 s of warm-up.
SHORT = ("--set", "duration_s=4", "--set", "warmup_s=1")

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not ROOT or shutil.which("ip") is None,
    reason="the testbed needs root (network namespaces, AF_PACKET) and iproute2's ip",
)


# --- no root needed ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sets", "fragments"),
    [
        # The simulator's default profile is not Linux: each field is named, with the profile.
        (
            (),
            (
                "tcp.delayed_ack_ms (200.0, profile 'rfc6298')",
                "TCP_ATO_MIN",
                "tcp.max_rto_s",
                "tcp.profile (rfc6298)",
                'profile = "linux"',
            ),
        ),
        (
            ("tcp.profile=linux", "tcp.initial_rto_s=3"),
            ("tcp.initial_rto_s (3.0)", "TCP_TIMEOUT_INIT"),
        ),
        (
            ("tcp.profile=linux", "tcp.ecn=true", "tcp.ecn_plus=rfc5562"),
            ("tcp.ecn_plus (rfc5562)", "RFC 5562"),
        ),
        (("tcp.profile=linux", "tcp.congestion_control=reno"), ("tcp.congestion_control (reno)",)),
        (("tcp.profile=linux", "tcp.clients.delayed_ack_ms=100"), ("tcp.clients.delayed_ack_ms",)),
        (
            ("tcp.profile=linux", "topology.bottleneck.rate_bps=1e9"),
            ("topology.bottleneck.rate_bps (1e+09)", "ceiling"),
        ),
        (
            ("tcp.profile=linux", "topology.access_rate_bps=1e6"),
            ("topology.access_rate_bps (1e+06)",),
        ),
        (("tcp.profile=linux", "workloads.0.tcp.ecn=true"), ("workloads[0].tcp",)),
        (("tcp.profile=linux", "metrics.flow_sample_ms=10"), ("metrics.flow_sample_ms",)),
    ],
)
def test_fields_the_testbed_cannot_honour_are_refused_by_name(sets, fragments):
    # Refused before anything is built (no root needed, nothing created).
    before = leftover_namespaces() if shutil.which("ip") else []
    scenario = str(EXAMPLES / "red-dumbbell.toml")
    args = [a for s in sets for a in ("--set", s)]
    result = invoke("testbed", "run", scenario, "--out", "/nonexistent/x", *args)
    assert_one_line_error(result, "the testbed cannot honour", *fragments)
    if shutil.which("ip"):
        assert leftover_namespaces() == before


def test_a_workload_not_implemented_yet_is_refused_by_name():
    scenario = {"duration_s": 1, "topology": {"bottleneck": {"rate_bps": 1e7}},
                "tcp": {"profile": "linux"},
                "workloads": [{"kind": "packet_source", "rate_pps": 10}]}
    with pytest.raises(TestbedUnsupported) as e:
        plan(scenario)
    assert e.value.problems == [
        (
            "workloads[0].kind (packet_source): not implemented on the testbed yet "
            "(bulk, exchanges, web_sessions, packmime_http and tpcw_browsers are)"
        )
    ]


def test_a_parking_lot_is_refused_by_name():
    with pytest.raises(TestbedUnsupported, match=r"topology.kind \(parking_lot\)"):
        plan(EXAMPLES / "parking-lot.toml", overrides=("tcp.profile=linux",))


def test_the_example_maps_onto_the_testbed():
    p = plan(EXAMPLE, seed=4)
    assert p.testbed["rate_bps"] == 10e6 and p.testbed["delay_ms"] == 5
    assert p.testbed["queue"]["aqm"]["kind"] == "red" and p.testbed["queue"]["aqm"]["ecn"]
    assert p.testbed["queue"]["aqm"]["above_max"] == "mark"
    for h in ("c0", "c2", "s1"):
        assert p.hosts[h].sysctls["net.ipv4.tcp_congestion_control"] == "cubic"
        assert p.hosts[h].sysctls["net.ipv4.tcp_ecn"] == 1
        # 40-byte headers: no timestamps, so 1460-byte segments fill 1500-byte packets.
        assert p.hosts[h].sysctls["net.ipv4.tcp_timestamps"] == 0
        assert p.hosts[h].route == {"rto_min": "200ms", "initcwnd": 10, "advmss": 1460}
    # Bulk flow i between c_i and s_i; each host pair's RTT drawn once, half of the extra
    # delay over the path's 10 ms each way, on the 100 us grid.
    assert [(f["client"], f["server"]) for f in p.bulk] == [(0, 0), (1, 1), (2, 2)]
    for (c, s), rtt in p.pair_rtt_ms.items():
        assert 20 <= rtt < 100
        extra = p.testbed["pair_delays"][c, s]
        assert extra == pytest.approx((rtt - 10) / 2)
        assert round(extra * 10) == pytest.approx(extra * 10)
    # Exchanges: Poisson arrivals at 10/s over 12 s, three exchanges each.
    assert 70 < len(p.connections) < 170
    assert all(len(c["exchanges"]) == 3 for c in p.connections)
    assert all(c["rtt_ms"] == p.pair_rtt_ms[c["client"], c["server"]] for c in p.connections)
    # The draws depend on the seed alone.
    assert plan(EXAMPLE, seed=4).connections == p.connections
    assert plan(EXAMPLE, seed=5).connections != p.connections


def test_ecn_plus_servers_are_emulated_by_the_router():
    p = plan(EXAMPLE, overrides=("tcp.ecn_plus=seed",))
    assert p.testbed["ecn_plus_servers"] == [0, 1, 2]
    assert plan(EXAMPLE).testbed["ecn_plus_servers"] == []


def test_a_testbed_run_never_takes_a_simulations_id():
    scenario = {"name": "x"}
    assert run_id(scenario, 1, "testbed") != run_id(scenario, 1)
    assert run_id(scenario, 1, None) == run_id(scenario, 1)


def test_without_root_a_valid_scenario_is_refused_for_root(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # as a user, even when run as root
    result = invoke("testbed", "run", EXAMPLE, "--out", str(tmp_path / "x"))
    assert result.exit_code == 1 and "needs root" in result.stderr
    assert not (tmp_path / "x").exists()


# --- root: real runs ---------------------------------------------------------------------------


def _ours(pid: int) -> list[str]:
    """The namespaces of the testbed(s) of process ``pid``."""
    return [
        ns for ns in leftover_namespaces() if ns.startswith((f"ecnlab-{pid}-", f"ecnlab-{pid}."))
    ]


def _pids(namespaces: list[str]) -> set[int]:
    out = set()
    for ns in namespaces:
        r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, check=False)
        out |= {int(p) for p in r.stdout.split()}
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def _wait_for_agents(proc: subprocess.Popen, timeout: float = 60) -> set[int]:
    """Waits until the run's router and its three client agents are running, and a second
    more (the run has begun); returns every pid seen in its namespaces."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        pids = _pids(_ours(proc.pid))
        if sum("_testbed_agent.py client" in _cmdline(p) for p in pids) == 3:
            time.sleep(1.0)
            return pids | _pids(_ours(proc.pid))
        time.sleep(0.1)
    raise AssertionError(f"no agents: {proc.communicate(timeout=30)}")


def _assert_nothing_left(proc: subprocess.Popen, pids: set[int]) -> None:
    assert _ours(proc.pid) == []
    left = {p: _cmdline(p) for p in pids if _alive(p)}
    assert left == {}, f"processes left: {left}"


@pytest.fixture(scope="module")
def testbed_run(tmp_path_factory):
    if not ROOT or shutil.which("ip") is None:
        pytest.skip("the testbed needs root (network namespaces, AF_PACKET) and iproute2's ip")
    out = tmp_path_factory.mktemp("testbed") / "red"
    proc = ecnlab_process("testbed", "run", EXAMPLE, "--out", str(out), "--seed", "2", *SHORT)
    pids = _wait_for_agents(proc)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "written to" in stdout
    _assert_nothing_left(proc, pids)
    return out


def _router_sample(direction: str, t_s: float, aqm: dict[str, float]) -> dict:
    """A router record of the kind ``tables_of`` reads: the bottleneck queue's counters and
    its discipline's variables at run time ``t_s`` (nothing counted)."""
    counters = ("enqueued", "dropped", "delivered_pkts", "delivered_bytes", "busy_ns", "marked",
                "dropped_early", "dropped_forced", "dropped_overflow", "random_losses",
                "area_pkts_ns", "area_bytes_ns")
    return {"type": "sample", "dir": direction, "t_ns": int(t_s * 1e9), "len_pkts": 0,
            "len_bytes": 0, "counts": {}, "aqm": aqm, **dict.fromkeys(counters, 0)}


@pytest.mark.parametrize(("kept", "expected"), [
    (None, {"avg", "max_p"}), (["avg"], {"avg"}), (["qdelay_ms"], set()),
])
def test_aqm_samples_keep_the_variables_metrics_names(kept, expected):
    # The router samples every variable of its discipline (RED: avg and max_p); as in the
    # simulator, the aqm_samples table keeps those `metrics.aqm_variables` names (all if unset).
    sets = ["duration_s=4", "warmup_s=1"]
    if kept is not None:
        sets.append(f"metrics.aqm_variables={json.dumps(kept)}")
    p = plan(EXAMPLE, 2, tuple(sets))
    records = [{"type": "start", "monotonic_ns": 0}] + [
        _router_sample(d, t, {"avg": 3.5, "max_p": 0.1})
        for t in (0.0, 1.0, 2.0, 3.0, 4.0) for d in ("up", "down")
    ]
    tables, _ = tables_of(p, 0.0, [], [], records)
    rows = tables["aqm_samples"].to_pylist()
    assert {r["variable"] for r in rows} == expected
    assert len(rows) == 2 * 4 * len(expected)  # both directions, samples at 1-4 s


def test_the_run_writes_the_simulators_tables_and_a_testbed_manifest(testbed_run, tmp_path):
    manifest = json.loads((testbed_run / "manifest.json").read_text())
    assert manifest["mode"] == "testbed" and manifest["summary"]["mode"] == "testbed"
    assert manifest["seed"] == 2 and manifest["scenario"]["duration_s"] == 4
    assert manifest["run_id"] == run_id(manifest["scenario"], 2, "testbed")
    assert manifest["testbed"]["tables_not_measured"] == ["sojourn", "flow_samples"]
    assert manifest["testbed"]["hosts"]["c0"]["sysctls"]["net.ipv4.tcp_ecn"] == 1
    got = ecnlab.read_run(testbed_run)
    # The same columns and types as the simulator's tables of the same scenario.
    sim = ecnlab.run(
        ecnlab.load_scenario(EXAMPLE, ["duration_s=0.5", "warmup_s=0"]), progress=False
    )
    for name in ecnlab.TABLES:
        assert got.tables[name].schema == sim.tables[name].schema, name
    ex = got.exchanges.to_pandas()
    assert len(ex) > 10 and ex.completed.sum() > 10
    assert (ex.start_s >= 1).all() and (ex.start_s < 4).all()
    done = ex[ex.completed]
    assert (done.response_time_s > 0.02).all(), "at least one path RTT (20 ms or more)"
    assert (done.response_time_s == done.end_s - done.start_s).all()
    assert set(ex.seq_in_flow) <= {0, 1, 2}
    flows = got.flows.to_pandas()
    bulk = flows[flows.kind == "bulk"]
    assert len(bulk) == 3 and (bulk.goodput_bytes > 0).all() and bulk.ecn.all()
    links = got.links.to_pandas()
    assert sorted(set(links.link)) == ["bottleneck_down", "bottleneck_up"]
    assert len(links) == 2 * 3  # 1 s rows over the 3 s window
    down = links[links.link == "bottleneck_down"]
    # RED* with ECN at 10 Mb/s: busy, marking data, and the queue below its hard limit.
    assert down.utilization.mean() > 0.7
    assert down.marks_data.sum() > 0 and down.drops_overflow.sum() == 0
    assert got.summary["utilization_down"] > 0.7 and got.summary["mark_rate_down"] > 0
    samples = got.queue_samples.to_pandas()
    assert len(samples) > 2 * 250 and samples.queue_pkts.max() > 0
    assert {"avg", "max_p"} <= set(got.aqm_samples.to_pandas().variable)
    # `ecnlab query` loads the run.
    result = invoke("query", str(testbed_run), "select count(*) as n from exchanges")
    assert result.exit_code == 0, result.output
    assert str(len(ex)) in result.stdout
    result = invoke("query", str(testbed_run), "select mode from runs")
    assert result.exit_code == 0 and "testbed" in result.stdout
    assert invoke("verify", str(testbed_run)).exit_code == 0


@needs_root
def test_an_agent_killed_mid_run_stops_the_run_and_leaves_nothing(tmp_path):
    out = tmp_path / "x"
    proc = ecnlab_process("testbed", "run", EXAMPLE, "--out", str(out), *SHORT)
    pids = _wait_for_agents(proc)
    client = next(p for p in pids if "_testbed_agent.py client" in _cmdline(p))
    os.kill(client, signal.SIGKILL)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1, stderr
    assert "error:" in stderr and "client agent" in stderr and "exited with -9" in stderr
    assert not out.exists()
    _assert_nothing_left(proc, pids)


@needs_root
def test_ctrl_c_mid_run_tears_everything_down(tmp_path):
    out = tmp_path / "x"
    proc = ecnlab_process("testbed", "run", EXAMPLE, "--out", str(out), *SHORT)
    pids = _wait_for_agents(proc)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr
    assert not out.exists()
    _assert_nothing_left(proc, pids)


@needs_root
def test_up_holds_the_testbed_until_down():
    proc = ecnlab_process("testbed", "up", EXAMPLE)
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("up;"):
            break
    assert any("ip netns exec" in line for line in lines), lines
    names = _ours(proc.pid)
    assert len(names) == 7  # router, 3 clients, 3 servers
    pids = _pids(names)
    result = invoke("testbed", "down")
    assert result.exit_code == 0, result.output
    proc.wait(timeout=30)
    _assert_nothing_left(proc, pids)


# --- the testbed against the simulator on the same scenario -----------------------------------

# Three CUBIC downloads at 10 Mb/s with per-pair RTTs of 20-100 ms, 30 s of which 10 s warm-up:
# examples/testbed-red.toml without its exchanges, and the same with CoDel (target 5 ms).
_QUEUES = {
    "red*": 'kind = "red"\necn = true\nabove_max = "mark"\nmin_th_pkts = 10\nmax_th_pkts = 30\n'
    "max_p = 0.1\nw_q = 0.002\ngentle = true\n",
    "codel": 'kind = "codel"\necn = true\ntarget_ms = 5\ninterval_ms = 100\n',
}
_BULK = """name = "testbed-validation"
duration_s = 30
warmup_s = 10

[topology]
clients = 3
servers = 3
access_rate_bps = 1e9
access_delay_ms = 0

[topology.bottleneck]
rate_bps = 10e6
delay_ms = 5

[topology.bottleneck.queue]
limit_pkts = 200

[topology.bottleneck.queue.aqm]
{aqm}
[tcp]
profile = "linux"
congestion_control = "cubic"
ecn = true

[[workloads]]
kind = "bulk"
flows = 3
start_jitter_s = 0.5
rtt_ms = {{ dist = "uniform", low = 20, high = 100 }}

[metrics]
queue_sample_ms = 10
"""
SIM_SEEDS = 10


@needs_root
@pytest.mark.parametrize("aqm", sorted(_QUEUES))
def test_the_aqm_holds_the_real_queue_where_the_simulator_holds_it(aqm, tmp_path):
    """One testbed run (seed 1) is one more draw from the simulator's distribution of the mean
    down queue over its window: within its mean +- 3 sd over 10 seeds of the same scenario.

    Measured when written (30 s runs; the simulator's 10 seeds): RED* 11.56 +- 0.84 packets
    (10.3 to 13.0), the testbed 10.9 and 11.9 (seeds 1 and 2); CoDel 6.88 +- 1.26 (5.0 to
    8.7), the testbed 5.7 and 6.9. The band fails a router whose AQM does not act (the
    buffer of 200 packets fills), or marks at a different point (RED*'s min_th is 10).
    """
    scenario = tmp_path / f"{aqm}.toml"
    scenario.write_text(_BULK.format(aqm=_QUEUES[aqm]))
    sim = [
        ecnlab.run(str(scenario), seed, progress=False).summary["mean_queue_pkts_down"]
        for seed in range(1, SIM_SEEDS + 1)
    ]
    mean, sd = statistics.mean(sim), statistics.stdev(sim)
    out = tmp_path / "testbed"
    proc = ecnlab_process("testbed", "run", str(scenario), "--out", str(out), "--quiet")
    _, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 0, stderr
    summary = json.loads((out / "manifest.json").read_text())["summary"]
    real = summary["mean_queue_pkts_down"]
    assert summary["utilization_down"] > 0.95, summary
    assert abs(real - mean) <= 3 * sd, (
        f"{aqm}: testbed mean queue {real:.2f} packets, simulator {mean:.2f} +- {sd:.2f} "
        f"({', '.join(f'{q:.1f}' for q in sim)})"
    )
