"""Seed 001's reproduction: scenarios per number of flows, per-run measures, claim logic."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import pytest
from ecnlab import store
from ecnlab.reproduce import get_study, part_sweeps
from ecnlab.reproduce import heterogeneous as het
from ecnlab.sweep import run_sweep, sweep_from_dict


@pytest.mark.parametrize("n", het.FLOW_COUNTS)
def test_group_split_gives_each_group_a_third_and_halves_by_start(n: int) -> None:
    rows = het.group_split(n)
    for name, rtt in het.GROUPS:
        mine = [r for r in rows if r[0] == name]
        assert {r[1] for r in mine} == {rtt}
        assert sum(r[3] for r in mine) == n // 3
        assert abs(mine[0][3] - mine[1][3]) <= 1
    at0 = sum(r[3] for r in rows if r[2] == 0.0)
    at2 = sum(r[3] for r in rows if r[2] == 2.0)
    assert at0 + at2 == n and abs(at0 - at2) <= 1


def test_group_split_rejects_counts_that_do_not_split_in_three() -> None:
    with pytest.raises(ValueError, match="multiple of 3"):
        het.group_split(16)


def _runs(mode: str) -> dict[str, list[Any]]:
    return {k: s.runs() for k, s in part_sweeps(get_study("heterogeneous"), mode).items()}


@pytest.mark.parametrize("mode", ["quick", "full"])
def test_every_run_builds_the_seed_scenario_for_its_number_of_flows(mode: str) -> None:
    parts = _runs(mode)
    assert set(parts) == {"flows", "grid", "aecn"}
    for name, runs in parts.items():
        assert len({r.seed for r in runs}) >= 3, name
        for r in runs:
            sc, axes = r.scenario, r.axes
            n = axes["n_flows"]
            topo = sc["topology"]
            assert topo["clients"] == topo["servers"] == n
            assert topo["access_rate_bps"] == pytest.approx(600e6 / n)
            assert topo["bottleneck"]["rate_bps"] == 10e6 and topo["bottleneck"]["delay_ms"] == 5
            assert topo["bottleneck"]["queue"]["limit_pkts"] == 50
            got = [
                (w["rtt_ms"]["value"], w["start_s"], w["flows"], w["host_offset"])
                for w in sc["workloads"]
            ]
            want = het.group_split(n)
            assert [g[:3] for g in got] == [(rtt, start, k) for _, rtt, start, k in want]
            # Every flow has its own hosts: offsets tile 0..N-1.
            assert [g[3] for g in got] == list(itertools.accumulate([0] + [g[2] for g in got[:-1]]))
            assert all(w["rwnd_bytes"]["value"] == 30 * 960 for w in sc["workloads"])
            tcp = sc["tcp"]
            assert tcp["mss_bytes"] + tcp["header_bytes"] == 1000
            assert tcp["congestion_control"] == axes["cc"]
            aqm = topo["bottleneck"]["queue"]["aqm"]
            if name == "aecn":
                assert aqm["kind"] == "aecn" and tcp["ecn"]
                continue
            scheme = axes["scheme"]
            assert aqm["kind"] == "red" and aqm["gentle"] is False and aqm["min_th_pkts"] == 5
            assert aqm["max_p"] == axes["max_p"]
            assert aqm["max_th_pkts"] == axes.get("max_th", 30)
            assert tcp["ecn"] == aqm["ecn"] == (scheme != "red")
            assert aqm["above_max"] == ("ecnm" if scheme == "ecnm" else "drop")


def test_per_run_measures_from_a_short_sweep(tmp_path: Path) -> None:
    base = het.base_scenario(6)
    base.update(duration_s=6.0, warmup_s=3.0)
    definition = {
        "name": "tiny",
        "base": base,
        "seeds": 1,
        "axes": [
            {"name": "n_flows", "values": [6]},
            {"name": "scheme", "values": ["red", "ecn"]},
            {"name": "max_p", "path": "topology.bottleneck.queue.aqm.max_p", "values": [0.5]},
            {"name": "cc", "path": "tcp.congestion_control", "values": ["reno"]},
        ],
        "derived": {**het.group_settings(), **het.scheme_settings()},
    }
    sweep = sweep_from_dict(definition, tmp_path / "tiny.toml")
    report = run_sweep(sweep, tmp_path / "out", jobs=1, progress=False)
    assert report.failed == 0
    frame = het.per_run(store.open_results(tmp_path / "out"))
    assert len(frame) == 2 and set(frame["scheme"]) == {"red", "ecn"}
    for _, row in frame.iterrows():
        assert 0 < row["goodput_mbps"] <= row["throughput_mbps"] <= 10
        assert row["goodput_mbps"] <= row["delivered_mbps"] + 1e-9
        groups = sum(row[f"{g}_goodput_mbps"] for g, _ in het.GROUPS)
        assert groups == pytest.approx(row["goodput_mbps"])
        assert row["robust_delay_ms"] < row["average_delay_ms"] < row["fragile_delay_ms"]
        assert row["robust_delay_ms"] >= 10 + 0.8
        assert 0 < row["jain"] <= 1


# --- claim logic on synthetic per-run frames -----------------------------------------------

Rule = Callable[[dict[str, Any]], dict[str, float]]


def _frame(axes: dict[str, list[Any]], rule: Rule, seeds: int = 3) -> pd.DataFrame:
    rows = []
    names = list(axes)
    for values in itertools.product(*axes.values()):
        for seed in range(1, seeds + 1):
            row = dict(zip(names, values), seed=seed)
            row.update(rule({**row, "jitter": 0.001 * seed}))
            rows.append(row)
    return pd.DataFrame(rows)


def _paper_like(row: dict[str, Any]) -> dict[str, float]:
    """A world that behaves as the seed says (enough to pass its claims)."""
    n, scheme, p = row["n_flows"], row.get("scheme", "aecn"), row.get("max_p", 0.1)
    th = row.get("max_th", 30)
    ecn = scheme in ("ecn", "ecnm")
    falls = n > 60 and (scheme == "red" or p == 0.1)
    gp = 9.0 - (0.5 if falls else 0.0) + (0.5 if ecn and p == 0.5 else 0.0) + row["jitter"]
    if scheme == "red":
        gp -= 1.0 + (0.002 * abs(th - 30) if n == 30 else 0.0)
    if scheme == "ecnm":
        gp -= 0.01 * abs(th - 30) + 0.01
    if scheme == "aecn":
        gp = 9.5
    tp = gp + (1.2 if scheme == "red" else 0.0)
    shift = (n - 30) / 90 * (1 if ecn else 0)
    return {
        "goodput_mbps": gp,
        "throughput_mbps": tp,
        "jain": (0.95 if scheme == "aecn" else 0.8 + (0.05 if ecn else 0.0))
        - (0.2 if n > 120 else 0.0)
        + (0.02 if (ecn and p == 0.1 and n == 30) or (ecn and p == 0.5 and n in (60, 120)) else 0),
        "lockouts": float(n > 120),
        "queue_delay_ms": 10.0 + (2.0 if ecn else 0.0),
        **{f"{g}_delay_ms": rtt / 2 + 12.0 for g, rtt in het.GROUPS},
        "fragile_goodput_mbps": 0.1 * gp + 0.3 * shift + (0.02 if p == 0.2 else 0.0),
        "average_goodput_mbps": 0.3 * gp + 0.2 * shift,
        "robust_goodput_mbps": 0.6 * gp - 0.5 * shift + (0.3 if ecn and p == 0.8 else 0.0),
    }


def _frames(rule: Rule) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    flows = _frame(
        {
            "n_flows": list(het.FLOW_COUNTS),
            "scheme": ["red", "ecn"],
            "max_p": [0.1, 0.5],
            "cc": ["reno", "newreno"],
        },
        rule,
    )
    grid = _frame(
        {
            "n_flows": [30, 120],
            "scheme": ["red", "ecn", "ecnm"],
            "max_th": [15, 30, 45],
            "max_p": [0.1, 0.2, 0.5, 0.8],
            "cc": ["reno"],
        },
        rule,
    )
    aecn = _frame({"n_flows": list(het.FLOW_COUNTS), "cc": ["reno", "newreno"]}, rule)
    return flows, grid, aecn


def test_claims_hold_in_a_world_that_behaves_as_the_paper_says() -> None:
    claims = het.evaluate_claims(*_frames(_paper_like))
    ids = [c.id for c in claims]
    assert len(ids) == len(set(ids)) >= 20
    failed = [c.id for c in claims if not c.passed]
    assert failed == []
    json.dumps([c.record() for c in claims], allow_nan=False)
    first = claims[0].ours["N=30"]
    assert first["n"] == 3 and first["mean"] == pytest.approx(1.5)


def test_claims_fail_when_the_world_contradicts_them() -> None:
    def swapped(row: dict[str, Any]) -> dict[str, float]:
        scheme = row.get("scheme", "aecn")
        out = _paper_like({**row, "scheme": {"red": "ecn", "ecn": "red"}.get(scheme, scheme)})
        if row["n_flows"] == 240 and row.get("scheme") == "red":
            out["lockouts"] = 0.0
        out["throughput_mbps"] = out["goodput_mbps"]
        return out

    flows, grid, aecn = _frames(_paper_like)
    sw_flows, sw_grid, _ = _frames(swapped)
    by_id = {c.id: c for c in het.evaluate_claims(sw_flows, sw_grid, aecn)}
    for claim_id in (
        "fig2-ecn-goodput-above-red",
        "fig7-9-ecn-goodput-above-red",
        "fig9-red-goodput-well-below-ecn",
        "fig10-throughputs-close",
        "lockouts-above-120",
        "newreno-ecn-goodput-above-red",
    ):
        assert not by_id[claim_id].passed, claim_id
    # The claims about the Reno series do not look at NewReno's runs.
    mixed = pd.concat([flows[flows["cc"] == "reno"], sw_flows[sw_flows["cc"] == "newreno"]])
    by_id = {c.id: c for c in het.evaluate_claims(mixed, grid, aecn)}
    assert by_id["fig2-ecn-goodput-above-red"].passed
    assert not by_id["newreno-ecn-goodput-above-red"].passed
