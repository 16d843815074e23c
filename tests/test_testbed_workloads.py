"""The ``web_sessions`` and ``packmime_http`` workloads on the testbed (docs/testbed.md).

Without root: the export of a workload's draws (``_core.workload_plan``, the simulator's own
generator run alone) against the simulator's ``exchanges`` table for the same scenario and
seed, the testbed plans made from it, and the refusals. As root (skipped otherwise): a short
run of each workload writes the export's exchanges with response times no shorter than their
host pair's RTTs allow.
"""

from __future__ import annotations

import os
import shutil
import statistics
from collections import Counter
from typing import Any

import ecnlab
import pytest
from conftest import EXAMPLES
from ecnlab import _core
from ecnlab._scenario import scenario_json
from ecnlab._testbed_plan import (
    LOCAL_PORTS,
    WEB_FLOW_BASE,
    TestbedUnsupported,
    normalize,
    plan,
    workload_plan,
)
from ecnlab.testbed import leftover_namespaces
from ecnlab.testbed_run import run_testbed

WEB = EXAMPLES / "testbed-web.toml"
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not ROOT or shutil.which("ip") is None,
    reason="the testbed needs root (network namespaces, AF_PACKET) and iproute2's ip",
)


def packmime(duration_s: float = 10.0, rate: float = 10.0) -> dict[str, Any]:
    """PackMime-HTTP/1.1 with many persistent connections (so pages, objects, think times and
    redrawn responses all occur), 10 Mb/s RED* with ECN, Linux hosts."""
    return {
        "name": "testbed-packmime",
        "duration_s": duration_s,
        "warmup_s": 0.0,
        "topology": {
            "clients": 2, "servers": 2, "access_rate_bps": 1e9,
            "bottleneck": {"rate_bps": 10e6, "delay_ms": 5, "queue": {
                "limit_pkts": 200, "aqm": {"kind": "red", "ecn": True, "above_max": "mark",
                                           "min_th_pkts": 10, "max_th_pkts": 30}}},
        },
        "tcp": {"profile": "linux", "congestion_control": "cubic", "ecn": True},
        "workloads": [{"kind": "packmime_http", "rate_per_s": rate, "http_1_1": True,
                       "p_persistent": 0.5,
                       "rtt_ms": {"dist": "uniform", "low": 20, "high": 100}}],
    }


def web(**changes: Any) -> dict[str, Any]:
    """examples/testbed-web.toml with warm-up 0 and workload fields changed."""
    s = ecnlab.load_scenario(WEB, ["warmup_s=0"])
    s["workloads"][0].update(changes)
    return s


def export(scenario: dict[str, Any], seed: int = 1, index: int = 0) -> dict[str, Any]:
    return workload_plan(normalize(scenario), index, seed)


def by_flow(exchanges) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for row in exchanges.sort_values(["flow", "seq_in_flow"]).to_dict("records"):
        out.setdefault(row["flow"], []).append(row)
    return out


# --- no root needed: the export is the simulator's draws ------------------------------------


def test_the_packmime_export_is_what_the_simulator_offers():
    scenario = packmime(duration_s=20.0, rate=15.0)
    conns = export(scenario, seed=3)["connections"]
    sim = ecnlab.run(scenario, 3, progress=False)
    flows = by_flow(sim.tables["exchanges"].to_pandas())
    # One workload arriving open loop: flow k is the k-th connection, every one opened.
    assert sorted(flows) == list(range(len(conns))) and len(conns) > 200
    persistent = 0
    for k, c in enumerate(conns):
        rows = flows[k]
        assert rows[0]["start_s"] == pytest.approx(c["arrival_ns"] / 1e9, abs=1e-9)
        assert (rows[0]["client"], rows[0]["server"]) == (c["client"], c["server"])
        # The exchanges the simulator started, in order, are the export's first ones.
        assert [(r["request_bytes"], r["response_bytes"]) for r in rows] == [
            (e["request_bytes"], e["response_bytes"]) for e in c["exchanges"][: len(rows)]]
        persistent += len(c["exchanges"]) > 1
    assert persistent > 20
    sim_rtt = dict(zip(sim.tables["flows"].column("flow").to_pylist(),
                       sim.tables["flows"].column("rtt_ms").to_pylist()))
    assert sim_rtt[0] == pytest.approx(conns[0]["rtt_ns"] / 1e6, abs=0.1)
    # Another seed offers other traffic.
    assert export(scenario, seed=4)["connections"][:5] != conns[:5]


def _times(session: dict[str, Any]) -> list[tuple[float, dict]]:
    """A session's request times with inter_page_from = "start": each page `gap` after the
    previous page's start, not before that page's last request (the simulator's rule)."""
    out, start = [], session["arrival_ns"]
    for page in session["pages"]:
        out += [((start + o["at_ns"]) / 1e9, o) for o in page["objects"]]
        start = max(start + page["gap_ns"], start + page["objects"][-1]["at_ns"])
    return out


def test_the_web_export_is_what_the_simulator_offers_when_pages_follow_their_starts():
    # With inter_page_from = "start" no time depends on the network: the simulator opens
    # exactly the export's objects at their times (a page may start with the previous page's
    # last request: objects at one time are compared as a set).
    scenario = web(inter_page_from="start")
    sessions = export(scenario)["sessions"]
    offered = Counter((round(t * 1e9), s["client"], o["server"],
                       o["exchanges"][0]["request_bytes"], o["exchanges"][0]["response_bytes"])
                      for s in sessions for t, o in _times(s) if t < scenario["duration_s"])
    sim = ecnlab.run(scenario, 1, progress=False)
    ex = sim.tables["exchanges"].to_pandas()
    assert (ex.seq_in_flow == 0).all() and len(set(ex.flow)) == len(ex)
    opened = Counter(zip((ex.start_s * 1e9).round().astype(int), ex.client, ex.server,
                         ex.request_bytes, ex.response_bytes))
    assert opened == offered and len(ex) > 500
    # Both mean something: a page's objects keep their order (flows numbered by opening).
    rows = ex.sort_values("flow")
    assert (rows.start_s.diff().dropna() >= 0).all()


def test_the_web_export_is_what_the_simulator_offers_closed_loop():
    # The default closed loop: later pages follow the network, but every session's first
    # page opens at the session's arrival, and every object the simulator opened is one of
    # the export's (client, server, sizes).
    scenario = web()
    sessions = export(scenario, seed=2)["sessions"]
    sim = ecnlab.run(scenario, 2, progress=False)
    ex = sim.tables["exchanges"].to_pandas()
    at = {round(row["start_s"] * 1e9): row for row in ex.to_dict("records")}
    firsts = 0
    for s in sessions:
        for o in s["pages"][0]["objects"]:
            t = s["arrival_ns"] + o["at_ns"]
            if t < scenario["duration_s"] * 1e9:
                row = at[t]
                assert (row["client"], row["server"]) == (s["client"], o["server"])
                assert row["response_bytes"] == o["exchanges"][0]["response_bytes"]
                firsts += 1
    assert firsts > 200
    offered = Counter((s["client"], o["server"], o["exchanges"][0]["response_bytes"])
                      for s in sessions for page in s["pages"] for o in page["objects"])
    opened = Counter(zip(ex.client, ex.server, ex.response_bytes))
    assert opened - offered == Counter() and len(ex) > firsts


def test_only_web_sessions_and_packmime_are_exported():
    scenario = normalize(ecnlab.load_scenario(EXAMPLES / "testbed-red.toml"))
    with pytest.raises(ValueError, match=r"workloads\[0\].kind"):
        _core.workload_plan(scenario_json(scenario), 0, 1)
    with pytest.raises(ValueError, match=r"workloads"):
        _core.workload_plan(scenario_json(scenario), 7, 1)


# --- no root needed: the plans ----------------------------------------------------------------


def test_the_web_example_becomes_sessions_of_the_exported_objects():
    p = plan(WEB, seed=4)
    sessions = export(ecnlab.load_scenario(WEB), seed=4)["sessions"]
    assert len(p.sessions) == len(sessions) > 50 and not p.connections
    base = WEB_FLOW_BASE
    for mine, theirs in zip(p.sessions, sessions):
        assert mine["start_s"] == theirs["arrival_ns"] / 1e9
        assert mine["client"] == theirs["client"] and mine["inter_page_from"] == "completion"
        assert mine["flow_base"] == base  # one number per object, consecutive
        base += sum(len(page["objects"]) for page in mine["pages"])
        for page, exported in zip(mine["pages"], theirs["pages"], strict=True):
            assert page["server"] == exported["server"]
            assert page["gap_s"] == exported["gap_ns"] / 1e9
            assert [o["exchanges"] for o in page["objects"]] == [
                [[e["request_bytes"], e["response_bytes"], e["server_delay_ns"] / 1e6, 0.0]
                 for e in o["exchanges"]] for o in exported["objects"]]
            # Every object gets its host pair's RTT.
            assert all(o["rtt_ms"] == p.pair_rtt_ms[mine["client"], page["server"]]
                       for o in page["objects"])
    # A pair's RTT is the first object's draw on it (the extra one-way delay on the 100 us
    # grid: within 0.1 ms).
    first: dict[tuple[int, int], float] = {}
    for s in sessions:
        for page in s["pages"]:
            for o in page["objects"]:
                first.setdefault((s["client"], page["server"]), o["rtt_ns"] / 1e6)
    assert first.keys() == p.pair_rtt_ms.keys()
    for pair, rtt in first.items():
        assert p.pair_rtt_ms[pair] == pytest.approx(rtt, abs=0.1001)
    assert any(n.startswith("web_sessions, packmime_http") for n in p.notes)
    # The draws depend on the seed alone.
    assert plan(WEB, seed=4).sessions == p.sessions
    assert plan(WEB, seed=5).sessions != p.sessions


def test_packmime_becomes_connections_of_the_exported_exchanges():
    scenario = packmime()
    p = plan(scenario, seed=2)
    conns = export(scenario, seed=2)["connections"]
    assert [c["flow"] for c in p.connections] == list(range(len(conns)))
    for mine, theirs in zip(p.connections, conns, strict=True):
        assert mine["start_s"] == theirs["arrival_ns"] / 1e9
        assert (mine["client"], mine["server"]) == (theirs["client"], theirs["server"])
        assert mine["rwnd_bytes"] == theirs["rwnd_bytes"]
        assert mine["rtt_ms"] == p.pair_rtt_ms[mine["client"], mine["server"]]
        assert mine["exchanges"] == [
            [max(16, e["request_bytes"]), e["response_bytes"], e["server_delay_ns"] / 1e6,
             e["think_ns"] / 1e9] for e in theirs["exchanges"]]
    assert any(len(c["exchanges"]) > 1 for c in p.connections)
    # Without rtt_ms every pair has the path RTT (10 ms).
    del scenario["workloads"][0]["rtt_ms"]
    assert set(plan(scenario).pair_rtt_ms.values()) == {10.0}


def test_too_many_connections_for_a_client_hosts_ports_are_refused():
    # 1000 connections/s from one client host to one server host: more than its 28 232
    # ephemeral ports within a TIME_WAIT.
    scenario = packmime(duration_s=40.0, rate=1000.0)
    scenario["topology"]["clients"] = scenario["topology"]["servers"] = 1
    scenario["workloads"][0]["http_1_1"] = False
    with pytest.raises(TestbedUnsupported) as e:
        plan(scenario)
    (problem,) = e.value.problems
    assert problem.startswith(f"workloads[0]: more than {LOCAL_PORTS} connections from c0 to s0")
    assert "TIME_WAIT" in problem
    scenario["duration_s"] = 20.0  # 20 000 connections fit
    plan(scenario)


def test_a_web_workload_and_another_with_other_rtts_on_a_host_pair_are_refused():
    scenario = web()
    scenario["workloads"].append({"kind": "exchanges", "arrival_rate_per_s": 5,
                                  "response_bytes": {"dist": "constant", "value": 1000},
                                  "rtt_ms": {"dist": "constant", "value": 30}})
    with pytest.raises(TestbedUnsupported) as e:
        plan(scenario)
    (problem,) = e.value.problems
    assert problem.startswith("workloads[1].rtt_ms: differs from workloads[0].rtt_ms on host pair")
    assert "one delay per host pair" in problem


# --- root: real runs ---------------------------------------------------------------------------


def _run(tmp_path, scenario: dict[str, Any], seed: int) -> ecnlab.Result:
    """``ecnlab testbed run`` of a scenario (a dict: in this process); checks that none of
    its namespaces is left."""
    out = run_testbed(scenario, tmp_path / "run", seed, progress=False)
    assert [ns for ns in leftover_namespaces() if ns.startswith(f"ecnlab-{os.getpid()}")] == []
    return ecnlab.read_run(out)


@needs_root
def test_a_web_sessions_run_replays_the_export_closed_loop(tmp_path):
    scenario = ecnlab.load_scenario(WEB, ["duration_s=12", "warmup_s=0"])
    got = _run(tmp_path, scenario, seed=1)
    ex = got.exchanges.to_pandas()
    flows = got.flows.to_pandas()
    assert set(flows.kind) == {"web_sessions"} and flows.flow.tolist() == list(range(len(flows)))
    sessions = export(scenario)["sessions"]
    # Every exchange is one of the export's objects (client, server, sizes), each object once.
    offered = Counter((s["client"], o["server"], o["exchanges"][0]["request_bytes"],
                       o["exchanges"][0]["response_bytes"])
                      for s in sessions for page in s["pages"] for o in page["objects"])
    opened = Counter(zip(ex.client, ex.server, ex.request_bytes, ex.response_bytes))
    assert opened - offered == Counter()
    # Every first page opens its objects at their times (open loop) until 1 s before the end.
    first = Counter((s["client"], o["server"], o["exchanges"][0]["response_bytes"])
                    for s in sessions for o in s["pages"][0]["objects"]
                    if (s["arrival_ns"] + o["at_ns"]) / 1e9 < 11)
    assert first - Counter(zip(ex.client, ex.server, ex.response_bytes)) == Counter()
    starts = sorted(ex.start_s)
    for s in sessions:
        for o in s["pages"][0]["objects"]:
            t = (s["arrival_ns"] + o["at_ns"]) / 1e9
            if t < 11:
                assert min(abs(x - t) for x in starts) < 0.02, t
    # Later pages too (closed loop): more exchanges than the first pages have.
    assert len(ex) > sum(first.values()) > 100
    # Each object is its own connection: handshake then exchange, at least two RTTs.
    done = ex[ex.completed]
    assert len(done) > 0.95 * len(ex)
    assert (done.response_time_s >= 2 * done.rtt_ms / 1000 * 0.99).all()
    small = done[done.response_bytes < 1000]
    excess = (small.response_time_s - 2 * small.rtt_ms / 1000).median()
    assert excess < 0.010, f"a small object takes {excess * 1000:.1f} ms over two RTTs"


@needs_root
def test_a_packmime_run_replays_the_exported_connections(tmp_path):
    scenario = packmime(duration_s=10.0)
    got = _run(tmp_path, scenario, seed=2)
    p = plan(scenario, seed=2)
    ex = by_flow(got.exchanges.to_pandas())
    assert set(got.flows.to_pandas().kind) == {"packmime_http"}
    assert len(ex) > 0.9 * len(p.connections) and len(p.connections) > 60
    persistent = 0
    for c in p.connections:
        rows = ex.get(c["flow"], [])
        if c["start_s"] > 9 or not rows:
            continue
        # The planned exchanges, in order, from the planned arrival.
        assert [(r["request_bytes"], r["response_bytes"]) for r in rows] == [
            (e[0], e[1]) for e in c["exchanges"][: len(rows)]]
        assert rows[0]["start_s"] == pytest.approx(c["start_s"], abs=0.02)
        rtt = p.pair_rtt_ms[c["client"], c["server"]] / 1000
        for k, r in enumerate(rows):
            if not r["completed"]:
                continue
            delay = c["exchanges"][k][2] / 1000
            # The first exchange carries the handshake; each waits for the server's delay.
            assert r["response_time_s"] >= (2 if k == 0 else 1) * rtt * 0.99 + delay
            if k:  # the next request after the think time
                before = rows[k - 1]
                assert r["start_s"] >= before["end_s"] + c["exchanges"][k - 1][3] - 0.002
        persistent += len(rows) > 1
    assert persistent > 5
    done = [r for rows in ex.values() for r in rows if r["completed"]]
    median = statistics.median(r["response_time_s"] for r in done)
    assert 0.03 < median < 0.5
