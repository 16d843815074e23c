"""Performance benchmark: fixed scenarios, each run in a fresh interpreter.

Each case runs in its own subprocess (``python -m ecnlab.bench <case> [n] [--smoke]
[--peer ns2]``, which prints one JSON line), so its peak resident memory is its own. The
subprocess drives the native core directly and never imports pyarrow, so the peak is the
simulator's plus the interpreter's; ``baseline_rss_mb`` in the record is the peak before the
run started (the interpreter and the native module), for scale.

Simulation cases (records with :data:`KEYS`, ``kind`` ``"simulation"``):

* ``dumbbell-10m`` (N = 15, 60, 240): N long-lived NewReno downloads with ECN over a 10 Mb/s,
  5 ms bottleneck with a 250-packet RED queue (ECN on, marking beyond max_th, gentle, min_th
  20, max_th 80, w_q 0.002, max_p 0.1), 100 Mb/s access links without delay, MSS 1000 bytes,
  100 s (10 s warm-up). Flow i has propagation RTT ``20 + 280 i / (N - 1)`` ms.
* ``dumbbell-100m`` (N = 100): the same at 100 Mb/s with 1 Gb/s access links and a 250-packet
  drop-tail queue, without ECN, 20 s (2 s warm-up).
* ``web-100m``: request/response traffic offering 105% of a 100 Mb/s bottleneck (1 ms,
  drop-tail 250): truncated-Lomax responses (mean about 7198 bytes), 300-byte requests,
  RTTs uniform on 10-150 ms, 20 clients and 20 servers, 30 s (5 s warm-up).
* ``link-1g`` (bare-engine reference): no TCP, one link: Poisson packets of 1000 bytes
  (``packet_source``) offering 105% of a 1 Gb/s bottleneck with a 250-packet drop-tail queue,
  10 s without warm-up. ``bottleneck_pkts_per_s`` counts every packet the link delivered.

Other cases:

* ``engine-queue`` (bare-engine reference, :data:`ENGINE_KEYS`): the event queue alone, the
  hold model on the simulator's calendar queue with :data:`ENGINE_PENDING` pending events of
  16 bytes (``_core.hold_benchmark``), 4 M pop-and-push steps; ``events_per_s``.
* ``conns-1e5`` (memory, :data:`MEMORY_KEYS`): 100,000 long-lived downloads all open at once
  (starting uniformly in the first second of a 2 s run, RTTs uniform on 20-300 ms, a
  one-segment receiver window, 10 Gb/s bottleneck and access links: no loss, all send);
  ``kb_per_conn`` is the peak RSS above the baseline, in KiB, per connection open at the end.
* ``run-overhead`` (the fixed cost of a run, :data:`OVERHEAD_KEYS`): ``python -m ecnlab run``
  of ``dumbbell-10m`` at N = 15 (a TOML file) as a whole command, after an untimed one that
  leaves Python's bytecode cache written (``PYTHONDONTWRITEBYTECODE`` cleared for both);
  ``overhead_s`` is its wall time minus the run's own ``wall_s`` in its manifest.
* ``--peer ns2`` on ``dumbbell-10m`` (:data:`PEER_KEYS`, ``kind`` ``"ns2"``): the case in
  ns-2.35 through the cross-validation translator, in its count-only form (no trace; queue
  monitors count the bottleneck packets); ``wall_s`` is the ``ns`` process's.

``--smoke`` shortens every duration and warm-up to 10% (and the engine case's steps), to
check that the cases run (not a measurement).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from . import _core

__all__ = [
    "CASES",
    "ENGINE_KEYS",
    "KEYS",
    "MEMORY_KEYS",
    "OVERHEAD_KEYS",
    "PEER_KEYS",
    "BenchError",
    "Case",
    "main",
    "measure",
    "parse_case",
    "peer_cases",
    "relate",
    "run_cases",
    "scenario",
    "toml_text",
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
"""Keys of every simulation record. Records also carry ``kind`` (``"simulation"``),
``wall_s`` (the run's wall time), ``baseline_rss_mb`` (peak RSS before the run: interpreter and
libraries) and ``smoke``; :func:`relate` adds ``of_engine_events`` and ``of_link_pkts``."""

ENGINE_KEYS = ("kind", "scenario", "pending_events", "events", "events_per_s", "wall_s")
"""Keys of the ``engine-queue`` record (``kind`` ``"engine"``)."""

MEMORY_KEYS = (
    "scenario",
    "n_flows",
    "open_conns",
    "sending_conns",
    "peak_rss_mb",
    "baseline_rss_mb",
    "kb_per_conn",
)
"""Keys the ``conns-1e5`` record has beyond :data:`KEYS`: connections open at the end (not
completed), those that delivered data, and the peak RSS above the baseline per open
connection (KiB)."""

OVERHEAD_KEYS = ("kind", "scenario", "n_flows", "wall_s", "core_s", "overhead_s", "peak_rss_mb")
"""Keys of the ``run-overhead`` record (``kind`` ``"command"``): the command's wall time, the
run's own ``wall_s`` (its manifest), their difference, and the command's peak RSS."""

PEER_KEYS = (
    "kind",
    "scenario",
    "simulator",
    "n_flows",
    "bottleneck_data_pkts",
    "bottleneck_pkts_per_s",
    "wall_s",
    "cpu_s",
)
"""Keys of a peer record (``kind`` ``"ns2"``): data packets that left ns-2's bottleneck queues
(both directions), per wall second of the ``ns`` process; ``cpu_s`` is its user + system
time. Records also carry ``setup_s`` (the wall time of the same script ended at 1 ms of
simulated time: Tcl, topology, routes, agents) and ``pkts_per_s_after_setup`` (the packets
over ``wall_s - setup_s``). :func:`relate` adds ``ecnlab_ratio`` (ecnlab's
``bottleneck_pkts_per_s`` at the same N over ns-2's)."""

SEED = 1
SMOKE_FACTOR = 0.1
WEB_MEAN_RESPONSE_BYTES = 7198  # mean of TL(1720, 1.2, 37.2e6), workloads spec 3.1
ENGINE_PENDING = 450
"""Pending events of the engine reference: what dumbbell-10m at N = 240 keeps pending (mean
over its events, measured: 58 at N = 15, 165 at N = 60, 450 at N = 240)."""
ENGINE_STEPS = 4_000_000
CONNS = 100_000
_NS2_SETUP_S = 0.001
OVERHEAD_N = 15
PEERS = ("ns2",)


@dataclass(frozen=True)
class Case:
    """One benchmark case: a case name, its count (flows, connections or pending events) and
    the simulator that runs it (``"ecnlab"``, or a peer such as ``"ns2"``)."""

    scenario: str
    n: int | None = None
    simulator: str = "ecnlab"

    @property
    def label(self) -> str:
        name = self.scenario if self.n is None else f"{self.scenario}:{self.n}"
        return name if self.simulator == "ecnlab" else f"{name} ({self.simulator})"


CASES = (
    Case("dumbbell-10m", 15),
    Case("dumbbell-10m", 60),
    Case("dumbbell-10m", 240),
    Case("dumbbell-100m", 100),
    Case("web-100m"),
    Case("link-1g"),
    Case("engine-queue", ENGINE_PENDING),
    Case("conns-1e5", CONNS),
    Case("run-overhead", OVERHEAD_N),
)
_NAMES = tuple(dict.fromkeys(c.scenario for c in CASES))
# Cases whose count is optional (a default) and cases that take none.
_DEFAULT_N = {"engine-queue": ENGINE_PENDING, "conns-1e5": CONNS, "run-overhead": OVERHEAD_N}
_NO_N = ("web-100m", "link-1g")


class BenchError(RuntimeError):
    """A benchmark case failed or printed something unexpected."""


def scenario(name: str, n: int | None = None, *, smoke: bool = False) -> dict[str, Any]:
    """Build the scenario dict of a benchmark case (``run-overhead`` runs ``dumbbell-10m``)."""
    scale = SMOKE_FACTOR if smoke else 1.0
    if name in ("dumbbell-10m", "run-overhead"):
        n = _need_n(name, _DEFAULT_N.get(name) if n is None else n)
        return _dumbbell(
            "dumbbell-10m", n, 10e6, 100e6, 100.0 * scale, 10.0 * scale, red=True
        )
    if name == "dumbbell-100m":
        return _dumbbell(name, _need_n(name, n), 100e6, 1e9, 20.0 * scale, 2.0 * scale)
    if name in _NO_N:
        if n is not None:
            raise ValueError(f"{name} takes no count")
        if name == "web-100m":
            return _web(name, 30.0 * scale, 5.0 * scale)
        return _link(name, 10.0 * scale)
    if name == "conns-1e5":
        return _conns(name, _need_n(name, CONNS if n is None else n), scale)
    if name == "engine-queue":
        raise ValueError("engine-queue runs the event queue alone: it has no scenario")
    raise ValueError(f"unknown benchmark case {name!r}; known: {', '.join(_NAMES)}")


def _need_n(name: str, n: int | None) -> int:
    if n is None or n < 1:
        raise ValueError(f"{name} needs a positive count, e.g. {name}:15")
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


LINK_RATE_BPS = 1e9
LINK_PKT_BYTES = 1000


def _link(name: str, duration_s: float) -> dict[str, Any]:
    # Packets enter the bottleneck's queue at the router: no access link, no TCP. No warm-up,
    # so the links table (the window) counts every packet of the run.
    return {
        "name": f"bench {name}",
        "duration_s": duration_s,
        "warmup_s": 0.0,
        "topology": {
            "clients": 1,
            "servers": 1,
            "bottleneck": {
                "rate_bps": LINK_RATE_BPS,
                "delay_ms": 1.0,
                "queue": {"limit_pkts": 250, "aqm": {"kind": "droptail"}},
            },
        },
        "workloads": [
            {
                "kind": "packet_source",
                "process": "poisson",
                "rate_pps": 1.05 * LINK_RATE_BPS / 8 / LINK_PKT_BYTES,
                "size_bytes": {"dist": "constant", "value": LINK_PKT_BYTES},
                "direction": "down",
            }
        ],
    }


def _conns(name: str, n: int, scale: float) -> dict[str, Any]:
    # n long-lived downloads, all started within the first half of the run and open to its
    # end. A one-segment receiver window keeps the offered load (n segments per RTT: about
    # 5 Gb/s at 1e5 and a mean RTT of 160 ms) below the 10 Gb/s links, so no SYN or SYN-ACK is
    # lost and every connection sends from its first RTT on; larger windows only overflow the
    # queue and make the run longer (2.5 times the packets at two segments, 2.4% of the
    # connections still in handshake retries at the end).
    return {
        "name": f"bench {name} n={n}",
        "duration_s": 2.0 * scale,
        "warmup_s": 1.0 * scale,
        "topology": {
            "clients": 100,
            "servers": 100,
            "access_rate_bps": 10e9,
            "access_delay_ms": 0.0,
            "bottleneck": {
                "rate_bps": 10e9,
                "delay_ms": 5.0,
                "queue": {"limit_pkts": 10_000, "aqm": {"kind": "droptail"}},
            },
        },
        "tcp": {"congestion_control": "newreno", "mss_bytes": 1000},
        "workloads": [
            {
                "kind": "bulk",
                "flows": n,
                "direction": "down",
                "start_jitter_s": 1.0 * scale,
                "rtt_ms": {"dist": "uniform", "low": 20, "high": 300},
                "rwnd_bytes": {"dist": "constant", "value": 1000},
            }
        ],
    }


def parse_case(text: str) -> list[Case]:
    """Parse ``name`` (all cases of that name) or ``name:n`` (one case, any n)."""
    name, sep, n_text = text.partition(":")
    if name not in _NAMES:
        raise ValueError(f"unknown benchmark case {name!r}; known: {', '.join(_NAMES)}")
    if not sep:
        return [c for c in CASES if c.scenario == name]
    try:
        n = int(n_text)
    except ValueError:
        raise ValueError(f"benchmark case {text!r}: {n_text!r} is not a count") from None
    case = Case(name, n)
    if name == "engine-queue":
        _need_n(name, n)
    else:
        scenario(case.scenario, case.n)  # validate the count now, not in the subprocess
    return [case]


def peer_cases(cases: Iterable[Case], peer: str = "ns2") -> list[Case]:
    """The cases a peer simulator runs too: the ``dumbbell-10m`` cases among ``cases``."""
    if peer not in PEERS:
        raise ValueError(f"unknown peer simulator {peer!r}; known: {', '.join(PEERS)}")
    return [
        Case(c.scenario, c.n, peer)
        for c in cases
        if c.scenario == "dumbbell-10m" and c.simulator == "ecnlab"
    ]


# --- measuring one case (in its own process) ---------------------------------------------------


def measure(case: Case, *, smoke: bool = False) -> dict[str, Any]:
    """Run one case in this process and return its record.

    Peak RSS is the whole process's, so call it in a fresh process (see :func:`run_cases`).
    """
    if case.simulator == "ns2":
        return _measure_ns2(case, smoke)
    if case.simulator != "ecnlab":
        raise ValueError(f"unknown simulator {case.simulator!r}")
    if case.scenario == "engine-queue":
        return _measure_engine(_need_n(case.scenario, case.n), smoke)
    if case.scenario == "run-overhead":
        return _measure_overhead(_need_n(case.scenario, case.n), smoke)
    return _measure_simulation(case, smoke)


def _measure_simulation(case: Case, smoke: bool) -> dict[str, Any]:
    # Peak RSS before the run: the interpreter and libraries, for scale.
    baseline_mb = _peak_rss_mb()
    config = scenario(case.scenario, case.n, smoke=smoke)
    # As ecnlab.run measures wall_s: build, run, finalize the tables (left in native form).
    start = time.perf_counter()
    sim = _core.Simulation(json.dumps(config), SEED)
    sim.run_until(sim.end_ns)
    tables = sim.results()
    wall = time.perf_counter() - start
    peak_mb = _peak_rss_mb()
    s = sim.summary()
    n_flows = case.n if case.n is not None else int(s["flows_started"])
    sim_s = float(s["sim_s"])
    pkts = int(s["bottleneck_data_pkts"])
    if case.scenario == "link-1g":
        # No TCP: every packet the link delivered (the links table, whole run).
        pkts = sum(_column(tables["links"]["delivered_pkts"]))
        n_flows = 0
    record: dict[str, Any] = {
        "kind": "simulation",
        "scenario": case.scenario,
        "n_flows": n_flows,
        "events_per_s": s["events"] / wall,
        "bottleneck_pkts_per_s": pkts / wall,
        "sim_s_per_wall_s": sim_s / wall,
        "peak_rss_mb": peak_mb,
        "goodput_mbps": s["goodput_bps"] / 1e6,
        "wall_s": wall,
        "baseline_rss_mb": baseline_mb,
        "smoke": smoke,
        "pgo": _core.built_with_pgo,
    }
    if case.scenario == "link-1g":
        record["bottleneck_pkts"] = pkts
    if case.scenario == "conns-1e5":
        flows = tables["flows"]
        completed = _column(flows["completed"])
        delivered = _column(flows["delivered_bytes"])
        open_conns = sum(1 for c in completed if not c)
        record["open_conns"] = open_conns
        record["sending_conns"] = sum(1 for d in delivered if d > 0)
        record["kb_per_conn"] = (
            (peak_mb - baseline_mb) * 1024 / open_conns if open_conns else math.nan
        )
    return record


_TYPECODES = {"f64": "d", "i64": "q", "u64": "Q", "bool": "B"}


def _column(column: tuple[Any, ...]) -> list[Any]:
    """A numeric column of the native tables (``(dtype, little-endian bytes)``) as a list."""
    dtype, data = column[0], column[-1]
    values = array(_TYPECODES[dtype])
    values.frombytes(data)
    if sys.byteorder == "big":
        values.byteswap()
    return values.tolist()


def _measure_engine(pending: int, smoke: bool) -> dict[str, Any]:
    steps = int(ENGINE_STEPS * (SMOKE_FACTOR if smoke else 1.0))
    seconds, _ = _core.hold_benchmark(pending, steps, SEED)
    return {
        "kind": "engine",
        "scenario": "engine-queue",
        "pending_events": pending,
        "events": steps,
        "events_per_s": steps / seconds,
        "wall_s": seconds,
        "peak_rss_mb": _peak_rss_mb(),
        "smoke": smoke,
    }


def _measure_overhead(n: int, smoke: bool) -> dict[str, Any]:
    from .store import MANIFEST

    config = scenario("dumbbell-10m", n, smoke=smoke)
    with tempfile.TemporaryDirectory(prefix="ecnlab-bench-") as tmp:
        path = Path(tmp) / "scenario.toml"
        path.write_text(toml_text(config), encoding="utf-8")
        out = Path(tmp) / "run"
        # The whole command as a user types it (stdout is not a terminal: no progress bar),
        # with Python's bytecode cache as an installed package has it: PYTHONDONTWRITEBYTECODE
        # is cleared and a first run, not reported, writes the cache (where the package's
        # folder is writable; a wheel's install writes it anyway). With the variable set,
        # every run compiles the package's modules from source.
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        for folder in (Path(tmp) / "warm", out):
            cmd = [sys.executable, "-m", "ecnlab", "run", str(path), "--out", str(folder)]
            start = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
            wall = time.perf_counter() - start
            if proc.returncode != 0:
                tail = proc.stderr.strip().splitlines()[-5:]
                raise BenchError(f"ecnlab run failed (exit {proc.returncode}): " + " | ".join(tail))
        manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    core = float(manifest["wall_s"])
    return {
        "kind": "command",
        "scenario": "run-overhead",
        "n_flows": n,
        "wall_s": wall,
        "core_s": core,
        "overhead_s": wall - core,
        "peak_rss_mb": _children_peak_rss_mb(),
        "smoke": smoke,
    }


def _measure_ns2(case: Case, smoke: bool) -> dict[str, Any]:
    """One ns-2 run of a dumbbell case: ecnlab draws the flows (as ``crosscheck`` does), the
    translator writes the count-only script, and only the ``ns`` process is timed."""
    from ._run import run
    from .crosscheck.ns2tables import bottleneck_data_pkts, read_counts
    from .crosscheck.run import bulk_flows, find_ns, run_ns2
    from .crosscheck.translate import translate

    if case.scenario != "dumbbell-10m":
        raise ValueError(f"ns-2 runs the dumbbell-10m cases only, not {case.scenario}")
    ns = find_ns()
    config = json.loads(_core.normalize(json.dumps(scenario(case.scenario, case.n, smoke=smoke))))
    flows = bulk_flows(run(config, SEED, progress=False))
    translation = translate(config, SEED, flows, count_only=True)
    # The same script ended after 1 ms of simulated time: ns-2's set-up (Tcl, the topology,
    # its routes, the agents of the flows starting at 0), timed separately.
    brief = dict(config, duration_s=_NS2_SETUP_S, warmup_s=_NS2_SETUP_S / 2)
    setup_script = translate(brief, SEED, flows, count_only=True).script
    with tempfile.TemporaryDirectory(prefix="ecnlab-bench-ns2-") as tmp:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = run_ns2(translation.script, Path(tmp) / "run", ns)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        counts = read_counts(Path(tmp) / "run")
        setup = run_ns2(setup_script, Path(tmp) / "setup", ns)
    pkts = bottleneck_data_pkts(counts, config)
    after_setup = wall - setup
    return {
        "kind": "ns2",
        "scenario": case.scenario,
        "simulator": "ns2",
        "n_flows": case.n,
        "bottleneck_data_pkts": pkts,
        "bottleneck_pkts_per_s": pkts / wall,
        "wall_s": wall,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "setup_s": setup,
        # None when noise makes the set-up run as long as the whole run (smoke runs)
        "pkts_per_s_after_setup": pkts / after_setup if after_setup > 0 else None,
        "smoke": smoke,
    }


def toml_text(value: Mapping[str, Any]) -> str:
    """A scenario dict as TOML: top-level keys, with tables and arrays written inline.

    Covers what scenarios hold (tables, arrays, strings, booleans, integers, finite floats).
    """
    return "".join(f"{_toml_key(k)} = {_toml_value(v)}\n" for k, v in value.items())


def _toml_key(key: str) -> str:
    bare = key and all(c.isalnum() or c in "-_" for c in key) and key.isascii()
    return key if bare else json.dumps(key)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"TOML scenario values must be finite, not {v}")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a TOML basic string
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"no TOML form for {type(v).__name__}")


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
    return _maxrss_mb(rss)


def _children_peak_rss_mb() -> float:
    """The largest peak resident memory of this process's finished children, in MiB."""
    return _maxrss_mb(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def _maxrss_mb(rss: int) -> float:
    # ru_maxrss is in KiB on Linux, in bytes on macOS.
    return rss / (1024 * 1024) if sys.platform == "darwin" else rss / 1024


# --- running cases and relating their records --------------------------------------------------


def run_cases(
    cases: Iterable[Case],
    *,
    smoke: bool = False,
    repeat: int = 3,
    on_start: Callable[[Case], None] | None = None,
) -> list[dict[str, Any]]:
    """Run each case ``repeat`` times, each in a fresh subprocess, keep the median run, and
    relate the records (:func:`relate`).

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
        if "peak_rss_mb" in record:
            record["peak_rss_mb"] = max(r["peak_rss_mb"] for r in done)
        record["repeats"] = repeat
        record["wall_s_all"] = [r["wall_s"] for r in done]
        records.append(record)
    return relate(records)


def relate(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Add the ratios between records of one run (in place; returns ``records``):
    ``ecnlab_ratio`` to each ns-2 record (ecnlab's ``bottleneck_pkts_per_s`` at the same N
    over ns-2's), and to each TCP simulation record ``of_engine_events`` (its events per
    second over the event queue's alone) and ``of_link_pkts`` (its bottleneck packets per
    second over the TCP-free link's)."""
    ecnlab = {
        (r["scenario"], r["n_flows"]): r
        for r in records
        if r.get("kind") == "simulation"
    }
    engine = next((r for r in records if r.get("kind") == "engine"), None)
    link = ecnlab.get(("link-1g", 0))
    for r in records:
        if r.get("kind") == "ns2":
            ours = ecnlab.get((r["scenario"], r["n_flows"]))
            if ours is not None and r["bottleneck_pkts_per_s"] > 0:
                r["ecnlab_ratio"] = ours["bottleneck_pkts_per_s"] / r["bottleneck_pkts_per_s"]
        elif r.get("kind") == "simulation" and r["scenario"] not in ("link-1g", "conns-1e5"):
            if engine is not None:
                r["of_engine_events"] = r["events_per_s"] / engine["events_per_s"]
            if link is not None:
                r["of_link_pkts"] = r["bottleneck_pkts_per_s"] / link["bottleneck_pkts_per_s"]
    return records


def _run_once(case: Case, smoke: bool) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "ecnlab.bench", case.scenario]
    if case.n is not None:
        cmd.append(str(case.n))
    if smoke:
        cmd.append("--smoke")
    if case.simulator != "ecnlab":
        cmd += ["--peer", case.simulator]
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
    parser.add_argument(
        "n", nargs="?", type=int, default=None, help="flows, connections or pending events"
    )
    parser.add_argument("--smoke", action="store_true", help="10%% of the durations")
    parser.add_argument("--peer", choices=PEERS, default=None, help="run it in this simulator")
    args = parser.parse_args(argv)
    n = args.n if args.n is not None else _DEFAULT_N.get(args.scenario)
    try:
        record = measure(Case(args.scenario, n, args.peer or "ecnlab"), smoke=args.smoke)
    except ValueError as e:
        parser.error(str(e))
    print(json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
