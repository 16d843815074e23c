"""Topologies from TOML through the Python API and the CLI: the parking-lot example runs,
records each bottleneck by name, and its errors name the field."""

from __future__ import annotations

from pathlib import Path

import ecnlab
import pytest
from ecnlab.cli import summary_table

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "parking-lot.toml"


def test_the_parking_lot_example_records_each_bottleneck() -> None:
    scenario = ecnlab.load_scenario(EXAMPLE, overrides=["duration_s=3", "warmup_s=1"])
    result = ecnlab.run(scenario, seed=1, progress=False)
    links = result.links.column("link").to_pylist()
    assert links[:6] == ["b1_up", "b1_down", "b2_up", "b2_down", "b3_up", "b3_down"]
    for b in (1, 2, 3):
        # Every bottleneck carries the long flow and its cross flow downstream.
        assert result.summary[f"utilization_b{b}_down"] > 0.8
    assert "utilization_down" not in result.summary
    rows = [str(r) for r in summary_table(result).columns[0]._cells]
    assert any(r.startswith("b2_down:") for r in rows), rows


def test_a_workload_naming_no_group_is_refused_by_name() -> None:
    scenario = ecnlab.load_scenario(EXAMPLE, overrides=["workloads.1.client_group=cross9"])
    with pytest.raises(ValueError, match=r"workloads\[1\]\.client_group \(cross9\) names no client group; known: long, cross1, cross2, cross3"):
        ecnlab.run(scenario, seed=1, progress=False)
