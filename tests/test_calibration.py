"""Offered-load calibration: the API, the [load] table and the CLI, on real simulations."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import ecnlab
import pytest
from ecnlab.calibration import (
    Calibration,
    DirectionalCalibration,
    calibrate,
    calibrate_directions,
    load_calibration,
    measure_load_mbps,
    resolve_load,
)
from ecnlab.cli import app
from typer.testing import CliRunner

# Web sessions of one page of two objects with exponential sizes: many short sessions, so a
# few hundred simulated seconds measure the load to a fraction of a percent (the default
# heavy-tailed sizes need hours, spec workloads 1.4).
CAL: dict[str, Any] = {
    "name": "cal-test",
    "duration_s": 300.0,
    "warmup_s": 20.0,
    "topology": {"clients": 10, "servers": 10, "bottleneck": {"rate_bps": 1e8, "delay_ms": 1}},
    "workloads": [
        {
            "kind": "web_sessions",
            "session_rate_per_s": 100.0,
            "pages_per_session": {"dist": "constant", "value": 1},
            "objects_per_page": {"dist": "constant", "value": 2},
            "inter_object_s": {"dist": "exponential", "mean": 0.1},
            "object_bytes": {"dist": "exponential", "mean": 5000},
        }
    ],
    "metrics": {"interval_s": 1.0, "queue_sample_ms": 0},
}


@pytest.fixture(scope="module")
def cal() -> Calibration:
    return calibrate(CAL, [10.0, 20.0], seed=1)


def _at(mbps: float, c: Calibration, seed: int) -> float:
    sc = copy.deepcopy(CAL)
    sc["topology"]["bottleneck"]["rate_bps"] = 1e9
    sc["workloads"][0]["session_rate_per_s"] = c.knob_values(mbps)["workloads.0.session_rate_per_s"]
    return measure_load_mbps(ecnlab.run(sc, seed))


@pytest.mark.parametrize(("target", "seed"), [(10.0, 101), (20.0, 102)])
def test_calibration_hits_its_target_with_another_seed(
    cal: Calibration, target: float, seed: int
) -> None:
    got = _at(target, cal, seed)
    assert abs(got - target) / target < 0.02, (got, target)


def test_load_table_resolves_through_a_stored_calibration(cal: Calibration, tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(cal.to_json())
    again = Calibration.from_json((tmp_path / "c.json").read_text())
    assert again.slope_mbps == pytest.approx(cal.slope_mbps)
    sc = copy.deepcopy(CAL)
    sc["load"] = {"offered_load_mbps": 15, "calibration": "c.json"}
    out = resolve_load(sc, tmp_path)
    assert "load" not in out
    assert out["workloads"][0]["session_rate_per_s"] == pytest.approx(100 * 15 / cal.slope_mbps)
    # A TOML scenario finds its calibration beside it.
    toml = tmp_path / "s.toml"
    toml.write_text(
        '[load]\noffered_load_mbps = 15\ncalibration = "c.json"\n'
        "[topology.bottleneck]\nrate_bps = 1e8\n"
        '[[workloads]]\nkind = "web_sessions"\nsession_rate_per_s = 100\n'
    )
    assert ecnlab.load_scenario(toml)["workloads"][0]["session_rate_per_s"] == pytest.approx(
        100 * 15 / cal.slope_mbps
    )
    # The calibration describes rate 100 only.
    sc["workloads"][0]["session_rate_per_s"] = 50
    with pytest.raises(ValueError, match=r"was made for knobs"):
        resolve_load(sc, tmp_path)
    with pytest.raises(
        ValueError, match=r"load.offered_load_mbps \(-1\) must be a positive number"
    ):
        resolve_load({**CAL, "load": {"offered_load_mbps": -1, "calibration": "c.json"}}, tmp_path)
    with pytest.raises(ValueError, match=r"load.rate: unknown field"):
        resolve_load({**CAL, "load": {"rate": 1}}, tmp_path)


def test_calibrate_needs_a_rate_knob() -> None:
    sc = copy.deepcopy(CAL)
    sc["workloads"] = [{"kind": "bulk", "flows": 1}]
    with pytest.raises(ValueError, match="no workload with a rate knob"):
        calibrate(sc, [10.0])


def test_cli_calibrate_prints_and_stores(tmp_path: Path) -> None:
    toml = tmp_path / "w.toml"
    toml.write_text(
        "duration_s = 30\nwarmup_s = 5\n[topology.bottleneck]\nrate_bps = 1e8\n"
        '[[workloads]]\nkind = "exchanges"\narrival_rate_per_s = 50\n'
        'response_bytes = { dist = "exponential", mean = 10000 }\n'
    )
    r = CliRunner().invoke(app, ["calibrate", str(toml), "--target-mbps", "5", "8"])
    assert r.exit_code == 0, r.output
    assert "workloads.0.arrival_rate_per_s" in r.output
    stored = json.loads((tmp_path / "w.calibration.json").read_text())
    assert [t["target_mbps"] for t in stored["targets"]] == [5.0, 8.0]
    r = CliRunner().invoke(app, ["calibrate", str(toml)])
    assert r.exit_code == 2
    assert "at least one target" in r.output
    # One way to give targets: bare values are refused, naming where they belong.
    r = CliRunner().invoke(app, ["calibrate", str(toml), "5", "8"])
    assert r.exit_code == 2
    assert "(5 8) follow --target-mbps" in r.output


def test_browser_population_is_calibrated_in_whole_browsers() -> None:
    sc: dict[str, Any] = {
        "duration_s": 60.0,
        "warmup_s": 25.0,
        "topology": {"clients": 10, "servers": 2, "bottleneck": {"rate_bps": 1e8}},
        "workloads": [{"kind": "tpcw_browsers", "browsers": 40}],
        "metrics": {"queue_sample_ms": 0},
    }
    c = calibrate(sc, [2.0], seed=3)
    # 40 browsers x 33 kB per 7 s page cycle: about 1.5 Mb/s of payload.
    assert 1.0 < c.points[0].mbps < 2.5, c.points
    assert all(abs(p.factor * 40 - round(p.factor * 40)) < 1e-9 for p in c.points)
    assert c.targets[2.0] == pytest.approx(2.0 / c.slope_mbps)


def test_sweep_axis_over_offered_load(tmp_path: Path) -> None:
    from ecnlab.sweep import load_sweep

    c = Calibration(
        knobs={"workloads.0.session_rate_per_s": 10.0},
        direction="down",
        duration_s=100.0,
        warmup_s=10.0,
        slope_mbps=5.0,
    )
    (tmp_path / "c.json").write_text(c.to_json())
    (tmp_path / "s.toml").write_text(
        '[load]\noffered_load_mbps = 15\ncalibration = "c.json"\n'
        "[topology.bottleneck]\nrate_bps = 1e8\n"
        '[[workloads]]\nkind = "web_sessions"\nsession_rate_per_s = 10\n'
    )
    (tmp_path / "sweep.toml").write_text(
        'base = "s.toml"\n[[axes]]\nname = "load"\npath = "load.offered_load_mbps"\nvalues = [5, 20]\n'
    )
    rates = [
        r.scenario["workloads"][0]["session_rate_per_s"]
        for r in load_sweep(tmp_path / "sweep.toml").runs()
    ]
    assert rates == pytest.approx([10.0, 40.0])


# Two directions, each loaded by its own workload (exponential sizes, so a few hundred seconds
# measure each load to about 1 %: 10 kB mean at ~100 arrivals/s is 2.7e4 exchanges per run,
# relative standard error sqrt(2 / 2.7e4) = 0.9 %).
TWO_WAY: dict[str, Any] = {
    "name": "two-way",
    "duration_s": 300.0,
    "warmup_s": 20.0,
    "topology": {"clients": 10, "servers": 10, "bottleneck": {"rate_bps": 1e8, "delay_ms": 1}},
    "workloads": [
        {
            "kind": "exchanges",
            "arrival_rate_per_s": 100.0,
            "response_bytes": {"dist": "exponential", "mean": 10000},
        },
        {
            "kind": "exchanges",
            "arrival_rate_per_s": 100.0,
            "request_bytes": {"dist": "exponential", "mean": 10000},
            "response_bytes": {"dist": "constant", "value": 300},
        },
    ],
    "metrics": {"interval_s": 1.0, "queue_sample_ms": 0},
}
TWO_WAY_TARGET = {"down": 20.0, "up": 8.0}


@pytest.fixture(scope="module")
def two_way() -> DirectionalCalibration:
    return calibrate_directions(TWO_WAY, [TWO_WAY_TARGET], {"down": [0], "up": [1]}, seed=1)


def test_per_direction_calibration_hits_both_targets_with_another_seed(
    two_way: DirectionalCalibration,
) -> None:
    # Each workload loads the other direction too (requests, ACKs): the fitted matrix says so.
    assert two_way.matrix_mbps["down"]["up"] > 0 and two_way.matrix_mbps["up"]["down"] > 0
    assert two_way.matrix_mbps["down"]["down"] > 20 * two_way.matrix_mbps["down"]["up"]
    sc = resolve_load(
        {**TWO_WAY, "load": {"offered_load_mbps": TWO_WAY_TARGET, "calibration": "c.json"}},
        _stored(two_way),
    )
    sc["topology"]["bottleneck"]["rate_bps"] = 1e9
    result = ecnlab.run(sc, 101)
    for d, target in TWO_WAY_TARGET.items():
        got = measure_load_mbps(result, d)
        # 3 % is three standard errors of one 280-second measurement (see TWO_WAY).
        assert abs(got - target) / target < 0.03, (d, got, target)


def _stored(cal: DirectionalCalibration) -> Path:
    import tempfile

    folder = Path(tempfile.mkdtemp())
    (folder / "c.json").write_text(cal.to_json())
    return folder


def test_per_direction_calibration_round_trips_and_checks_its_input(
    two_way: DirectionalCalibration, tmp_path: Path
) -> None:
    (tmp_path / "c.json").write_text(two_way.to_json())
    again = load_calibration(tmp_path / "c.json")
    assert isinstance(again, DirectionalCalibration)
    assert again.knob_values(TWO_WAY_TARGET) == pytest.approx(two_way.knob_values(TWO_WAY_TARGET))
    stored = json.loads((tmp_path / "c.json").read_text())
    assert stored["groups"] == {
        "down": ["workloads.0.arrival_rate_per_s"],
        "up": ["workloads.1.arrival_rate_per_s"],
    }
    assert len(stored["points"]) == 4  # (1, 1), each group halved, the target
    sc = {**TWO_WAY, "load": {"offered_load_mbps": 20, "calibration": "c.json"}}
    with pytest.raises(ValueError, match=r"is per direction: give \{ down = \.\.\., up"):
        resolve_load(sc, tmp_path)
    sc["load"]["offered_load_mbps"] = {"down": 20}
    with pytest.raises(ValueError, match="must give the directions of the calibration"):
        resolve_load(sc, tmp_path)
    sc["load"]["offered_load_mbps"] = {"down": 20, "up": -1}
    with pytest.raises(ValueError, match=r"load.offered_load_mbps.up \(-1\) must be a positive"):
        resolve_load(sc, tmp_path)
    sc["load"]["offered_load_mbps"] = {"down": 20, "sideways": 1}
    with pytest.raises(ValueError, match="must be a table of loads for down and/or up"):
        resolve_load(sc, tmp_path)
    # Out of reach: the up workload's ACKs alone exceed a tiny up target.
    with pytest.raises(ValueError, match="non-positive factors"):
        two_way.factors_for({"down": 100.0, "up": 0.01})


def test_per_direction_groups_are_checked() -> None:
    with pytest.raises(ValueError, match="workload 0 is in both the down and the up group"):
        calibrate_directions(TWO_WAY, [TWO_WAY_TARGET], {"down": [0], "up": [0, 1]})
    with pytest.raises(ValueError, match=r"rate knobs \['workloads.1.arrival_rate_per_s'\]"):
        calibrate_directions(TWO_WAY, [{"down": 5.0}], {"down": [0]})
    with pytest.raises(ValueError, match="workloads.7 has no rate knob"):
        calibrate_directions(TWO_WAY, [TWO_WAY_TARGET], {"down": [0], "up": [7]})
    with pytest.raises(ValueError, match="must give a load for each direction"):
        calibrate_directions(TWO_WAY, [{"down": 5.0}], {"down": [0], "up": [1]})


def test_cli_calibrates_per_direction(tmp_path: Path) -> None:
    toml = tmp_path / "w.toml"
    toml.write_text(
        "duration_s = 20\nwarmup_s = 5\n[topology.bottleneck]\nrate_bps = 1e8\n"
        '[[workloads]]\nkind = "exchanges"\narrival_rate_per_s = 50\n'
        'response_bytes = { dist = "exponential", mean = 10000 }\n'
        '[[workloads]]\nkind = "exchanges"\narrival_rate_per_s = 50\n'
        'request_bytes = { dist = "exponential", mean = 10000 }\n'
        'response_bytes = { dist = "constant", value = 300 }\n'
    )
    args = ["calibrate", str(toml), "--down-mbps", "6", "--up-mbps", "3"]
    r = CliRunner().invoke(app, [*args, "--down-workloads", "0", "--up-workloads", "1"])
    assert r.exit_code == 0, r.output
    stored = json.loads((tmp_path / "w.calibration.json").read_text())
    assert stored["targets"][0]["target_mbps"] == {"down": 6.0, "up": 3.0}
    r = CliRunner().invoke(app, [*args, "--down-workloads", "0"])
    assert r.exit_code == 2
    assert "--up-workloads with --up-mbps" in r.output
