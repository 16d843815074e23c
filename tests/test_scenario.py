"""load_scenario, overrides, and validation by the Rust core."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ecnlab
import pytest
from conftest import EXAMPLES
from ecnlab import _core


def normalize(scenario: dict[str, Any]) -> dict[str, Any]:
    return json.loads(_core.normalize(json.dumps(scenario)))


# --- loading and overrides (pure Python) -----------------------------------------------


def test_load_example() -> None:
    s = ecnlab.load_scenario(EXAMPLES / "dumbbell-bulk.toml")
    assert s["topology"]["bottleneck"]["rate_bps"] == 10e6
    assert s["workloads"][0]["kind"] == "bulk"
    assert ecnlab.load_scenario(str(EXAMPLES / "dumbbell-bulk.toml")) == s


def test_overrides_nested_and_list_index() -> None:
    s = ecnlab.load_scenario(
        EXAMPLES / "dumbbell-bulk.toml",
        [
            "topology.bottleneck.rate_bps=20e6",
            "workloads.0.flows=30",
            "name = spaced out ",
            "topology.bottleneck.queue.aqm.kind=droptail",
            'workloads.0.rtt_ms={ dist = "constant", value = 40 }',
            "workloads.0.start_jitter_s=0",
        ],
    )
    assert s["topology"]["bottleneck"]["rate_bps"] == 20e6
    assert s["workloads"][0]["flows"] == 30
    assert isinstance(s["workloads"][0]["flows"], int)
    assert s["name"] == "spaced out"  # not TOML: kept as a string
    assert s["topology"]["bottleneck"]["queue"]["aqm"]["kind"] == "droptail"
    assert s["workloads"][0]["rtt_ms"] == {"dist": "constant", "value": 40}
    assert s["workloads"][0]["start_jitter_s"] == 0


def test_override_values_are_toml() -> None:
    s = ecnlab.load_scenario(
        {"a": {}}, ["a.f=1.5", "a.b=true", 'a.s="10"', "a.l=[1, 2]", "a.d=2024-01-01"]
    )
    assert s["a"] == {"f": 1.5, "b": True, "s": "10", "l": [1, 2], "d": "2024-01-01"}


def test_override_creates_missing_tables() -> None:
    s = ecnlab.load_scenario(EXAMPLES / "dumbbell-bulk.toml", ["metrics.interval_s=0.5"])
    assert s["metrics"] == {"interval_s": 0.5}
    assert normalize(s)["metrics"]["interval_s"] == 0.5


def test_dict_source_is_not_modified() -> None:
    source = {"topology": {"bottleneck": {"rate_bps": 1e6}}}
    s = ecnlab.load_scenario(source, ["topology.bottleneck.rate_bps=2e6"])
    assert s["topology"]["bottleneck"]["rate_bps"] == 2e6
    assert source["topology"]["bottleneck"]["rate_bps"] == 1e6


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("duration_s", "expected path=value"),
        ("=5", "expected path=value"),
        ("topology..rate_bps=1", "empty segment"),
        ("duration_s.x=1", "duration_s is 30, not a table"),
        ("workloads.x.flows=1", "'x' is not an index"),
        ("workloads.5.flows=1", "index 5 out of range, workloads has 1 entries"),
        ("workloads.-1.flows=1", "out of range"),
    ],
)
def test_malformed_override(override: str, message: str) -> None:
    with pytest.raises(ValueError, match="override") as e:
        ecnlab.load_scenario(EXAMPLES / "dumbbell-bulk.toml", [override])
    assert message in str(e.value)
    assert override in str(e.value)


def test_missing_file() -> None:
    with pytest.raises(FileNotFoundError, match="nosuch.toml"):
        ecnlab.load_scenario("nosuch.toml")


def test_invalid_toml(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("duration_s = = 3\n")
    with pytest.raises(ValueError, match=r"bad\.toml: invalid TOML"):
        ecnlab.load_scenario(bad)


# --- validation by the core --------------------------------------------------------------


def test_normalize_fills_defaults_and_is_idempotent() -> None:
    minimal = {
        "topology": {"bottleneck": {"rate_bps": 10e6}},
        "workloads": [{"kind": "bulk", "flows": 1}],
    }
    n = normalize(minimal)
    assert n["duration_s"] == 60
    assert n["warmup_s"] == 0
    assert n["topology"]["clients"] == 1
    assert n["topology"]["bottleneck"]["delay_ms"] == 1
    assert n["topology"]["bottleneck"]["queue"] == {"limit_pkts": 100, "aqm": {"kind": "droptail"}}
    assert n["metrics"]["interval_s"] == 1
    assert n["workloads"][0]["direction"] == "down"
    # A normalized scenario is a valid scenario, and normalizing it changes nothing.
    assert normalize(n) == n


def test_normalize_expands_the_tcp_profile() -> None:
    # "every default filled in": the profile's values are defaults too (docs/scenario.md,
    # tcp table), and two spellings of the same run should normalize alike.
    base = {
        "topology": {"bottleneck": {"rate_bps": 10e6}},
        "workloads": [{"kind": "bulk", "flows": 1}],
    }
    tcp = normalize(base)["tcp"]
    assert tcp["profile"] == "rfc6298"
    assert tcp["mss_bytes"] == 1460
    assert tcp["min_rto_s"] == 1
    assert tcp["initial_window_segments"] == 3  # RFC 3390 for a 1460-byte MSS
    linux = normalize({**base, "tcp": {"profile": "linux", "min_rto_s": 0.3}})["tcp"]
    assert linux["min_rto_s"] == 0.3
    assert linux["initial_window_segments"] == 10


@pytest.mark.parametrize("name", ["dumbbell-bulk.toml", "web-dumbbell.toml", "mm1.toml"])
def test_examples_are_valid(name: str) -> None:
    normalize(ecnlab.load_scenario(EXAMPLES / name))


def test_schema_is_json() -> None:
    schema = json.loads(_core.schema())
    assert isinstance(schema, dict)
    assert "properties" in schema or "$defs" in schema or "definitions" in schema


def _small_valid() -> dict[str, Any]:
    return ecnlab.load_scenario(EXAMPLES / "dumbbell-bulk.toml", ["duration_s=1", "warmup_s=0"])


@pytest.mark.parametrize(
    ("override", "names"),
    [
        # Unknown fields: the message names the unknown key and where it is.
        ("nosuch=1", ["nosuch"]),
        ("topology.bottleneck.nosuch=1", ["nosuch", "bottleneck"]),
        ("workloads.0.nosuch=1", ["nosuch", "workloads"]),
        # Rule violations: the message names the field (docs/scenario.md's example).
        ("topology.bottleneck.rate_bps=-5", ["topology.bottleneck.rate_bps"]),
        ("topology.bottleneck.queue.aqm.kind=nosuch", ["nosuch", "aqm"]),
        ("warmup_s=100", ["warmup_s"]),
        ("workloads.0.flows=-1", ["flows"]),
        ("duration_s=soon", ["duration_s"]),
    ],
)
def test_invalid_scenario_names_the_field(override: str, names: list[str]) -> None:
    scenario = ecnlab.load_scenario(_small_valid(), [override])
    for check in (
        lambda: _core.normalize(json.dumps(scenario)),
        lambda: _core.Simulation(json.dumps(scenario), 1),
        lambda: ecnlab.run(scenario, progress=False),
    ):
        with pytest.raises(ValueError) as e:
            check()
        for name in names:
            assert name in str(e.value), f"{override}: {name!r} not in {str(e.value)!r}"


def test_rtt_below_path_rtt_is_refused() -> None:
    # Path RTT is 2 * (2 * 0 + 10) = 20 ms; a flow cannot be faster than its path.
    scenario = ecnlab.load_scenario(
        _small_valid(), ['workloads.0.rtt_ms={dist = "constant", value = 5}']
    )
    with pytest.raises(ValueError, match="(?i)rtt"):
        ecnlab.run(scenario, progress=False)
