"""Property tests (Hypothesis) of scenario loading and short runs, through the Python API and
the command line (issue 19): random scenarios, valid and invalid, made by mutating a valid one
with values of every kind (NaN, infinities, huge and tiny numbers, numpy scalars, wrong types,
deep nesting). Whatever the input: no exception but ValueError or TypeError, every message
names a field, and every scenario accepted (valid and within a memory budget) runs.

Examples per test: ``HYPOTHESIS_PROFILE=ci`` (default, 300, derandomized so CI runs the same
ones every time) or ``dev`` (10,000, random). docs/scenario.md gives the counts run in
development and the command.
"""

from __future__ import annotations

import copy
import json
import os
import re
from typing import Any

import ecnlab
import numpy as np
from conftest import EXAMPLES, SMALL, invoke
from ecnlab import _core
from ecnlab._result import tables_from_native
from ecnlab._scenario import scenario_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

settings.register_profile(
    "ci",
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    max_examples=10_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

BUDGET = 256e6  # bytes: what an accepted scenario may be estimated to need
EVENTS = 20_000  # events of a short run

# The shared small scenario (both TCP workloads), shortened.
BASE: dict[str, Any] = {**copy.deepcopy(SMALL), "duration_s": 0.5, "warmup_s": 0.1}

PATHS = [
    "name", "duration_s", "warmup_s", "nosuch", "topology.clients", "topology.access_rate_bps",
    "topology.access_delay_ms", "topology.delay_resolution_us", "topology.bottleneck.rate_bps",
    "topology.bottleneck.delay_ms", "topology.bottleneck.random_loss",
    "topology.bottleneck.queue.limit_pkts", "topology.bottleneck.queue.limit_bytes",
    "topology.bottleneck.queue.aqm", "tcp.mss_bytes", "tcp.min_rto_s", "tcp.max_rto_s",
    "tcp.delayed_ack_ms", "tcp.beta", "tcp.ecn", "tcp.ecn_plus", "tcp.abe", "tcp.profile",
    "tcp.clients", "workloads.0.flows", "workloads.0.rtt_ms", "workloads.0.rwnd_bytes",
    "workloads.0.bytes", "workloads.0.tcp", "workloads.1.arrival_rate_per_s",
    "workloads.1.response_bytes", "workloads.1.think_time_s", "workloads.1.stop_s",
    "metrics.interval_s", "metrics.queue_sample_ms", "metrics.flow_sample_ms",
    "metrics.sojourn_bin_ms",
]  # fmt: skip
TOP = ("name", "duration_s", "warmup_s", "topology", "tcp", "workloads", "metrics", "scenario")

numbers = st.one_of(
    st.sampled_from([0, -1, 1, 0.5, 1e-12, 1e-9, 1e3, 1e6, 1e7, 1e12, 1e300, -1e300, 2**64]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=0, max_value=200),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.builds(np.int64, st.integers(min_value=-(2**63), max_value=2**63 - 1)),
    st.builds(np.float64, st.floats(allow_nan=True)),
    st.builds(np.float32, st.floats(width=32, allow_nan=True)),
)
leaves = st.one_of(
    numbers,
    st.booleans(),
    st.builds(np.bool_, st.booleans()),
    st.none(),
    st.text(max_size=5),
    st.sampled_from(["seed", "rfc5562", "linux", "cubic", "red", "pi", "codel", "droptail"]),
    st.sampled_from([b"x", {1, 2}, (1, 2), object()]),
)
dists = st.builds(
    lambda kind, a, b, c: (
        {"dist": kind, "value": a, "mean": a, "low": a, "high": b, "scale": a}
        | ({"shape": c, "max": b} if kind in ("lomax", "bounded_pareto", "pareto") else {})
    ),
    st.sampled_from(["constant", "exponential", "uniform", "lomax", "pareto", "nosuch"]),
    numbers,
    numbers,
    numbers,
).map(lambda d: {k: v for k, v in d.items() if k in _DIST_FIELDS.get(d["dist"], ("mean",))})
_DIST_FIELDS = {
    "constant": ("dist", "value"),
    "exponential": ("dist", "mean"),
    "uniform": ("dist", "low", "high"),
    "lomax": ("dist", "scale", "shape", "max"),
    "pareto": ("dist", "mean", "shape"),
    "nosuch": ("dist", "mean"),
}
aqms = st.builds(
    lambda kind, extra: {"kind": kind, **extra},
    st.sampled_from(["red", "ared", "rem", "pi", "pie", "codel", "threshold", "dcn", "afd"]),
    st.dictionaries(
        st.sampled_from(["ecn", "max_p", "q_ref_pkts", "target_ms", "min_th_pkts", "k_pkts", "a"]),
        st.one_of(numbers, st.booleans()),
        max_size=3,
    ),
)
values = st.one_of(
    leaves,
    dists,
    aqms,
    st.lists(leaves, max_size=3),
    st.dictionaries(st.text(max_size=4), leaves, max_size=3),
    st.recursive(
        leaves, lambda inner: st.dictionaries(st.just("x"), inner, max_size=1), max_leaves=80
    ),
)
mutations = st.lists(st.tuples(st.sampled_from(PATHS), values), min_size=1, max_size=4)


def _mutated(changes: list[tuple[str, Any]]) -> dict[str, Any]:
    scenario = copy.deepcopy(BASE)
    for path, value in changes:
        node: Any = scenario
        *keys, last = path.split(".")
        for key in keys:
            node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
        node[last] = value
    return scenario


def _names_a_field(message: str) -> bool:
    first = re.split(r"[.\[ (:]", message, maxsplit=1)[0]
    return first in TOP or first == "nosuch" or message.startswith("override")


def _short_run(scenario: dict[str, Any], seed: int) -> str:
    """Load, check and run up to EVENTS events through the same layers as ecnlab.run."""
    try:
        loaded = ecnlab.load_scenario(scenario)
        text = scenario_json(loaded)
        _core.normalize(text)
        sim = _core.Simulation(text, seed, BUDGET)
    except (ValueError, TypeError) as e:
        assert _names_a_field(str(e)), f"error names no field: {e}"
        return "refused"
    sim.run_until(sim.end_ns, EVENTS)
    tables = tables_from_native(sim.results())
    assert set(tables) >= {"flows", "links", "exchanges"}
    summary = sim.summary()
    assert summary["events"] <= EVENTS
    return "ran"


@given(mutations, st.integers(min_value=0, max_value=2**64 - 1))
def test_random_scenarios_are_refused_naming_a_field_or_run(
    changes: list[tuple[str, Any]], seed: int
) -> None:
    _short_run(_mutated(changes), seed)


@given(st.lists(st.sampled_from(sorted(set(PATHS) - {"nosuch"})), min_size=1, max_size=3))
def test_valid_values_of_the_right_kind_run(paths: list[str]) -> None:
    """In-range numbers at numeric fields: most such scenarios are valid, and those run."""
    plausible = {
        "name": "x", "duration_s": 0.4, "warmup_s": 0.05, "topology.clients": 3,
        "topology.access_rate_bps": 1e8, "topology.access_delay_ms": 1,
        "topology.delay_resolution_us": 50, "topology.bottleneck.rate_bps": 2e7,
        "topology.bottleneck.delay_ms": 1, "topology.bottleneck.random_loss": 0.01,
        "topology.bottleneck.queue.limit_pkts": 60, "topology.bottleneck.queue.limit_bytes": 90000,
        "topology.bottleneck.queue.aqm": {"kind": "red", "ecn": True},
        "tcp.mss_bytes": 1000, "tcp.min_rto_s": 0.2, "tcp.max_rto_s": 30, "tcp.delayed_ack_ms": 40,
        "tcp.beta": 0.7, "tcp.ecn": True, "tcp.ecn_plus": "off", "tcp.abe": False,
        "tcp.profile": "linux", "tcp.clients": {"mss_bytes": 536}, "workloads.0.flows": 4,
        "workloads.0.rtt_ms": {"dist": "constant", "value": 30},
        "workloads.0.rwnd_bytes": {"dist": "constant", "value": 30000}, "workloads.0.bytes": 50000,
        "workloads.0.tcp": {"congestion_control": "cubic"}, "workloads.1.arrival_rate_per_s": 5,
        "workloads.1.response_bytes": {"dist": "exponential", "mean": 4000},
        "workloads.1.think_time_s": {"dist": "constant", "value": 0.1},
        "workloads.1.stop_s": 0.3, "metrics.interval_s": 0.05, "metrics.queue_sample_ms": 5,
        "metrics.flow_sample_ms": 20, "metrics.sojourn_bin_ms": 1,
    }  # fmt: skip
    assert _short_run(_mutated([(p, plausible[p]) for p in paths]), 1) == "ran"


override_values = st.one_of(
    st.sampled_from(["nan", "inf", "-inf", "1e300", "-5", "0", "1e-12", "10.0", "true", '"x"']),
    st.sampled_from(["[1, 2]", "{}", '{dist="constant", value=1e300}', '{kind="pi"}', "= =", ""]),
    st.floats().map(repr),
    st.integers().map(str),
    st.text(max_size=8),
)
override_paths = st.one_of(
    st.sampled_from(PATHS),
    st.sampled_from(["workloads.5.flows", "duration_s.x", "topology..rate_bps", "workloads.x"]),
    st.text(max_size=10),
)


@given(st.lists(st.tuples(override_paths, override_values), min_size=1, max_size=3))
def test_command_line_overrides_give_a_clean_line_or_a_valid_scenario(
    overrides: list[tuple[str, str]],
) -> None:
    args = [a for path, value in overrides for a in ("--set", f"{path}={value}")]
    result = invoke("validate", str(EXAMPLES / "dumbbell-bulk.toml"), *args)
    assert result.exit_code in (0, 2), result.output
    assert "Traceback" not in result.output
    if result.exit_code == 2:
        err = result.stderr.strip()
        assert err.startswith("error:") and "\n" not in err, err
    else:
        assert isinstance(json.loads(result.stdout)["workloads"], list)
