"""Performance benchmark: fixed scenarios, each run in a fresh interpreter.

Each case runs in its own subprocess (``python -m ecnlab.bench <scenario> [n] [--smoke]``,
which prints one JSON line), so its peak resident memory is its own. The subprocess drives
the native core directly and never imports pyarrow, so the peak is the simulator's plus the
interpreter's; ``baseline_rss_mb`` in the record is the peak before the run started (the
interpreter and the native module), for scale.

Cases:

* ``dumbbell-10m`` (N = 15, 60, 240): N long-lived NewReno downloads with ECN over a 10 Mb/s,
  5 ms bottleneck with a 250-packet RED queue (ECN on, marking beyond max_th, gentle, min_th
  20, max_th 80, w_q 0.002, max_p 0.1), 100 Mb/s access links without delay, MSS 1000 bytes,
  100 s (10 s warm-up). Flow i has propagation RTT ``20 + 280 i / (N - 1)`` ms.
* ``dumbbell-100m`` (N = 100): the same at 100 Mb/s with 1 Gb/s access links and a 250-packet
  drop-tail queue, without ECN, 20 s (2 s warm-up).
* ``web-100m``: request/response traffic offering 105% of a 100 Mb/s bottleneck (1 ms,
  drop-tail 250): truncated-Lomax responses (mean about 7198 bytes), 300-byte requests,
  RTTs uniform on 10-150 ms, 20 clients and 20 servers, 30 s (5 s warm-up).

``--smoke`` shortens every duration and warm-up to 10%, to check that the cases run (not a
measurement).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Callable

from . import _core

__all__ = [
    "CASES",
    "KEYS",
    "BenchError",
    "Case",
    "main",
    "measure",
    "parse_case",
    "run_cases",
    "scenario",
]

KEYS = (
    "scenario",
    "n_flows",
    "events_per_s",
    "bottleneck_pkts_per_s",
    "sim_s_per_wall_s",
    "peak_rss_mb",
    "goodput_mbps",
)
"""Keys of every benchmark record. Records also carry ``wall_s`` (the run's wall time),
``baseline_rss_mb`` (peak RSS before the run: interpreter and libraries) and ``smoke``."""

SEED = 1
SMOKE_FACTOR = 0.1
WEB_MEAN_RESPONSE_BYTES = 7198  # mean of TL(1720, 1.2, 37.2e6), workloads spec 3.1


@dataclass(frozen=True)
class Case:
    """One benchmark case: a scenario name and, for the dumbbells, the number of flows."""

    scenario: str
    n: int | None = None

    @property
    def label(self) -> str:
        return self.scenario if self.n is None else f"{self.scenario}:{self.n}"


CASES = (
    Case("dumbbell-10m", 15),
    Case("dumbbell-10m", 60),
    Case("dumbbell-10m", 240),
    Case("dumbbell-100m", 100),
    Case("web-100m"),
)
_NAMES = tuple(dict.fromkeys(c.scenario for c in CASES))


class BenchError(RuntimeError):
    """A benchmark case failed or printed something unexpected."""


def scenario(name: str, n: int | None = None, *, smoke: bool = False) -> dict[str, Any]:
    """Build the scenario dict of a benchmark case."""
    scale = SMOKE_FACTOR if smoke else 1.0
    if name == "dumbbell-10m":
        return _dumbbell(name, _need_n(name, n), 10e6, 100e6, 100.0 * scale, 10.0 * scale, red=True)
    if name == "dumbbell-100m":
        return _dumbbell(name, _need_n(name, n), 100e6, 1e9, 20.0 * scale, 2.0 * scale)
    if name == "web-100m":
        if n is not None:
            raise ValueError("web-100m takes no flow count")
        return _web(name, 30.0 * scale, 5.0 * scale)
    raise ValueError(f"unknown benchmark scenario {name!r}; known: {', '.join(_NAMES)}")


def _need_n(name: str, n: int | None) -> int:
    if n is None or n < 1:
        raise ValueError(f"{name} needs a positive flow count, e.g. {name}:15")
    return n


def _rtt_ms(i: int, n: int) -> float:
    # Propagation RTTs spread evenly over 20-300 ms, deterministically (not drawn).
    return 20.0 if n == 1 else 20.0 + 280.0 * i / (n - 1)


# Issue 2's benchmark RED: RED* with ECN (mark beyond max_th), gentle.
_BENCH_RED = {
    "kind": "red",
    "ecn": True,
    "above_max": "mark",
    "gentle": True,
    "min_th_pkts": 20,
    "max_th_pkts": 80,
    "w_q": 0.002,
    "max_p": 0.1,
}


def _dumbbell(
    name: str,
    n: int,
    rate_bps: float,
    access_bps: float,
    duration_s: float,
    warmup_s: float,
    *,
    red: bool = False,
) -> dict[str, Any]:
    aqm = _BENCH_RED if red else {"kind": "droptail"}
    return {
        "name": f"bench {name} n={n}",
        "duration_s": duration_s,
        "warmup_s": warmup_s,
        "topology": {
            "clients": n,
            "servers": n,
            "access_rate_bps": access_bps,
            "access_delay_ms": 0.0,
            "bottleneck": {
                "rate_bps": rate_bps,
                "delay_ms": 5.0,
                "queue": {"limit_pkts": 250, "aqm": aqm},
            },
        },
        "tcp": {"congestion_control": "newreno", "mss_bytes": 1000, "ecn": red},
        # One single-flow workload per flow: each gets its own constant RTT.
        "workloads": [
            {
                "kind": "bulk",
                "flows": 1,
                "direction": "down",
                "rtt_ms": {"dist": "constant", "value": _rtt_ms(i, n)},
            }
            for i in range(n)
        ],
    }


def _web(name: str, duration_s: float, warmup_s: float) -> dict[str, Any]:
    rate_bps = 100e6
    load = 1.05
    return {
        "name": f"bench {name}",
        "duration_s": duration_s,
        "warmup_s": warmup_s,
        "topology": {
            "clients": 20,
            "servers": 20,
            "bottleneck": {
                "rate_bps": rate_bps,
                "delay_ms": 1.0,
                "queue": {"limit_pkts": 250, "aqm": {"kind": "droptail"}},
            },
        },
        "workloads": [
            {
                "kind": "exchanges",
                "arrival_rate_per_s": load * rate_bps / 8 / WEB_MEAN_RESPONSE_BYTES,
                "request_bytes": {"dist": "constant", "value": 300},
                "response_bytes": {"dist": "lomax", "scale": 1720, "shape": 1.2, "max": 37.2e6},
                "rtt_ms": {"dist": "uniform", "low": 10, "high": 150},
            }
        ],
    }


def parse_case(text: str) -> list[Case]:
    """Parse ``name`` (all cases of that scenario) or ``name:n`` (one case, any n)."""
    name, sep, n_text = text.partition(":")
    if name not in _NAMES:
        raise ValueError(f"unknown benchmark scenario {name!r}; known: {', '.join(_NAMES)}")
    if not sep:
        return [c for c in CASES if c.scenario == name]
    try:
        n = int(n_text)
    except ValueError:
        raise ValueError(f"benchmark case {text!r}: {n_text!r} is not a flow count") from None
    case = Case(name, n)
    scenario(case.scenario, case.n)  # validate the count now, not in the subprocess
    return [case]


def measure(case: Case, *, smoke: bool = False) -> dict[str, Any]:
    """Run one case in this process and return its record.

    Peak RSS is the whole process's, so call it in a fresh process (see :func:`run_cases`).
    """
    # Peak RSS before the run: the interpreter and libraries, for scale.
    baseline_mb = _peak_rss_mb()
    config = scenario(case.scenario, case.n, smoke=smoke)
    # As ecnlab.run measures wall_s: build, run, finalize the tables (left in native form).
    start = time.perf_counter()
    sim = _core.Simulation(json.dumps(config), SEED)
    sim.run_until(sim.end_ns)
    sim.results()
    wall = time.perf_counter() - start
    s = sim.summary()
    n_flows = case.n if case.n is not None else int(s["flows_started"])
    sim_s = float(s["sim_s"])
    return {
        "scenario": case.scenario,
        "n_flows": n_flows,
        "events_per_s": s["events"] / wall,
        "bottleneck_pkts_per_s": s["bottleneck_data_pkts"] / wall,
        "sim_s_per_wall_s": sim_s / wall,
        "peak_rss_mb": _peak_rss_mb(),
        "goodput_mbps": s["goodput_bps"] / 1e6,
        "wall_s": wall,
        "baseline_rss_mb": baseline_mb,
        "smoke": smoke,
    }


def _peak_rss_mb() -> float:
    """Peak resident memory of this process, in MiB.

    On Linux this is ``VmHWM`` from ``/proc/self/status``, which starts afresh at ``exec``;
    ``ru_maxrss`` would carry over the peak of the parent that forked this process.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # ru_maxrss is in KiB on Linux, in bytes on macOS.
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


def run_cases(
    cases: Iterable[Case],
    *,
    smoke: bool = False,
    repeat: int = 3,
    on_start: Callable[[Case], None] | None = None,
) -> list[dict[str, Any]]:
    """Run each case ``repeat`` times, each in a fresh subprocess, and keep the median run.

    The repeats go round the cases (every case once, then every case again, ...), so a slow
    spell of a shared machine falls on several cases rather than on all repeats of one.
    The record kept is the run with the median wall time; ``peak_rss_mb`` is the largest peak
    of the repeats, and ``repeats`` and ``wall_s_all`` tell what was measured.

    Raises:
        BenchError: a case failed (with the tail of its stderr).
    """
    if repeat < 1:
        raise ValueError(f"repeat ({repeat}) must be at least 1")
    cases = list(cases)
    runs: list[list[dict[str, Any]]] = [[] for _ in cases]
    for round_ in range(repeat):
        for case, done in zip(cases, runs):
            if on_start is not None and round_ == 0:
                on_start(case)
            done.append(_run_once(case, smoke))
    records = []
    for done in runs:
        done.sort(key=lambda r: r["wall_s"])
        record = dict(done[len(done) // 2])
        record["peak_rss_mb"] = max(r["peak_rss_mb"] for r in done)
        record["repeats"] = repeat
        record["wall_s_all"] = [r["wall_s"] for r in done]
        records.append(record)
    return records


def _run_once(case: Case, smoke: bool) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "ecnlab.bench", case.scenario]
    if case.n is not None:
        cmd.append(str(case.n))
    if smoke:
        cmd.append("--smoke")
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-5:]
        raise BenchError(
            f"benchmark {case.label} failed (exit {proc.returncode}): " + " | ".join(tail)
        )
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise BenchError(
            f"benchmark {case.label} printed no JSON record: {proc.stdout[-200:]!r}"
        ) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m ecnlab.bench``: run one case, print one JSON line."""
    parser = argparse.ArgumentParser(
        prog="python -m ecnlab.bench", description="Run one benchmark case in this process."
    )
    parser.add_argument("scenario", choices=_NAMES)
    parser.add_argument("n", nargs="?", type=int, default=None, help="number of flows")
    parser.add_argument("--smoke", action="store_true", help="10%% of the durations")
    args = parser.parse_args(argv)
    try:
        record = measure(Case(args.scenario, args.n), smoke=args.smoke)
    except ValueError as e:
        parser.error(str(e))
    print(json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
