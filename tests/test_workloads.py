"""The workload examples: they validate, run, and offer what their comments say."""

from __future__ import annotations

import ecnlab
import pytest
from conftest import EXAMPLES
from ecnlab.calibration import measure_load_mbps


@pytest.mark.parametrize("name", ["web-sessions", "tcp-mix", "heterogeneous-groups"])
def test_workload_examples_run(name: str) -> None:
    s = ecnlab.load_scenario(EXAMPLES / f"{name}.toml", ["duration_s=8", "warmup_s=2"])
    r = ecnlab.run(s, seed=1)
    assert r.flows.num_rows > 0


def test_web_sessions_example_has_the_seed_windows_and_rtts() -> None:
    s = ecnlab.load_scenario(EXAMPLES / "web-sessions.toml", ["duration_s=60", "warmup_s=10"])
    f = ecnlab.run(s, seed=2).flows.to_pylist()
    assert len(f) > 1000
    rw = [x["rwnd_bytes"] for x in f]
    # 8/16/64 KiB with probabilities 0.20/0.35/0.45: binomial standard errors below 0.015.
    for value, p in [(8192, 0.20), (16384, 0.35), (65536, 0.45)]:
        share = rw.count(value) / len(rw)
        assert abs(share - p) < 4 * (p * (1 - p) / len(rw)) ** 0.5, (value, share)
    rtts = [x["rtt_ms"] for x in f]
    # Uniform 10-150 ms (the grid of 0.1 ms rounds each value by at most 0.05 ms).
    assert min(rtts) >= 9.95 and max(rtts) <= 150.05
    assert abs(sum(rtts) / len(rtts) - 80) < 4 * 40.4 / len(rtts) ** 0.5


def test_tcp_mix_loads_both_directions() -> None:
    s = ecnlab.load_scenario(
        EXAMPLES / "tcp-mix.toml",
        ["duration_s=120", "warmup_s=20", "topology.bottleneck.rate_bps=1e9"],
    )
    r = ecnlab.run(s, seed=1)
    down, up = measure_load_mbps(r, "down"), measure_load_mbps(r, "up")
    # About 33/s x 38.2 kB x 8 = 10 Mb/s of payload each way, heavy tailed: only the order
    # of magnitude is checked here.
    assert 3 < down < 30, down
    assert 3 < up < 30, up
