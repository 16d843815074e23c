"""The simulations that check the analytical models.

Each function builds a scenario (docs/scenario.md) that matches a model's assumptions as
closely as the simulator allows, runs it, and reduces the tables to the model's quantities.
Runs are independent, so :func:`run_many` spreads them over processes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

import numpy as np
import pyarrow.compute as pc

from .._run import run
from .mxm1 import DEFAULT_MSS, RWND_MIX
from .sizes import (
    BoundedPareto,
    Constant,
    Mixture,
    SizeDistribution,
    TruncatedLomax,
)

__all__ = [
    "burst_scenario",
    "measure_queue",
    "run_many",
    "simulate_queue",
]

T = TypeVar("T")

HEADER_BYTES = 40
# Bytes a connection puts on the down link besides its response segments: SYN-ACK and FIN,
# 40 bytes each (two per connection measured with one-segment responses; the request's ACK
# rides on the response). Used only to aim the arrival rate at a load; the figures use the
# measured utilization.
_CONTROL_BYTES_DOWN = 2 * HEADER_BYTES
# A bounded Pareto is not a scenario distribution: it is simulated as this many
# equiprobable quantiles (the mid-point of each probability bin).
_QUANTILES = 2000


def _quantiles(d: BoundedPareto, n: int = _QUANTILES) -> list[float]:
    u = (np.arange(n) + 0.5) / n
    c = 1.0 - (d.low / d.high) ** d.shape
    return [float(np.ceil(x)) for x in d.low * (1.0 - u * c) ** (-1.0 / d.shape)]


def _parts(sizes: SizeDistribution) -> list[tuple[float, dict[str, Any], float]]:
    """(weight, scenario response_bytes, mean wire bytes on the down link) per part."""
    if isinstance(sizes, Mixture):
        out = []
        for part, w in zip(sizes.parts, sizes.weights):
            out.extend((w * w2, spec, wire) for w2, spec, wire in _parts(part))
        return out
    if isinstance(sizes, BoundedPareto):
        values = _quantiles(sizes)
        spec: dict[str, Any] = {
            "dist": "discrete",
            "values": values,
            "weights": [1.0] * len(values),
        }
        wire = float(np.mean([v + HEADER_BYTES * np.ceil(v / DEFAULT_MSS) for v in values]))
        return [(1.0, spec, wire + _CONTROL_BYTES_DOWN)]
    if isinstance(sizes, (TruncatedLomax, Constant)):
        pmf = sizes.segments_pmf(DEFAULT_MSS)
        segs = float((np.arange(len(pmf)) * pmf).sum())
        wire = sizes.mean_bytes() + HEADER_BYTES * segs + _CONTROL_BYTES_DOWN
        return [(1.0, sizes.to_scenario(), wire)]
    raise ValueError(f"cannot simulate size distribution {sizes!r}")


def burst_scenario(
    sizes: SizeDistribution,
    capacity_bps: float,
    load: float,
    *,
    duration_s: float = 30.0,
    warmup_s: float = 5.0,
    access_factor: float = 10.0,
    hosts: int = 20,
    queue_sample_ms: float = 1.0,
) -> dict[str, Any]:
    """The traffic of seed 000 section 5.2 on a FIFO bottleneck that never overflows.

    Poisson connection arrivals, one request/response each, responses drawn from ``sizes``,
    per-connection RTT uniform on 10-150 ms and receiver window 8/16/64 kB at 20/35/45 % (seed
    000), initial window 2 (the ``seed-2005`` profile). Access links run ``access_factor``
    times faster than the bottleneck so bursts reach the queue nearly whole, as the model
    assumes. The arrival rate aims at ``load`` of the down direction.
    """
    if not 0.0 < load < 1.0:
        raise ValueError(f"load ({load}) must be in (0, 1)")
    parts = _parts(sizes)
    mean_wire = sum(w * wire for w, _, wire in parts)
    rate = load * capacity_bps / (8.0 * mean_wire)
    rwnd = {
        "dist": "discrete",
        "values": [float(r) for r, _ in RWND_MIX],
        "weights": [w for _, w in RWND_MIX],
    }
    workloads = [
        {
            "kind": "exchanges",
            "arrival_rate_per_s": rate * w,
            "request_bytes": {"dist": "constant", "value": 300},
            "response_bytes": spec,
            "rtt_ms": {"dist": "uniform", "low": 10, "high": 150},
            "rwnd_bytes": rwnd,
        }
        for w, spec, _ in parts
    ]
    return {
        "name": f"mxm1-{capacity_bps / 1e6:g}mbps-{load:g}",
        "duration_s": duration_s,
        "warmup_s": warmup_s,
        "topology": {
            "clients": hosts,
            "servers": hosts,
            "access_rate_bps": access_factor * capacity_bps,
            "bottleneck": {
                "rate_bps": capacity_bps,
                "delay_ms": 1,
                "queue": {"limit_pkts": 1_000_000, "aqm": {"kind": "droptail"}},
            },
        },
        "tcp": {"profile": "seed-2005"},
        "workloads": workloads,
        "metrics": {"queue_sample_ms": queue_sample_ms, "interval_s": 1.0},
    }


def measure_queue(
    result: Any, capacity_bps: float, delay_s: float = 0.005, packet_bytes: int = 1500
) -> dict[str, float]:
    """The model's quantities from one run, on the down direction of the bottleneck.

    * ``utilization``: delivered wire bytes over capacity (the model's rho).
    * ``mean_queue_pkts``: time-averaged packets in the system, waiting plus the one in
      transmission (the model's N), in full-size packets: waiting bytes over ``packet_bytes``
      plus the busy fraction. The model counts only data segments; counting SYN-ACKs, FINs
      and ACKs as packets (``mean_queue_pkts_any_size``) inflates short flows.
    * ``p_delay_gt``: fraction of the periodic queue samples with at least K full packets of
      bytes waiting, K = floor(delay_s * C / packet); with the packet in transmission that is
      N > K, the model's event.
    * ``p_sojourn_gt``: fraction of packets that waited longer than ``delay_s`` (what packets
      see, not the time average; bursts see longer queues).
    """
    s = result.summary
    links = result.links
    down = pc.equal(links["link"], "bottleneck_down")
    mq = pc.filter(links["mean_queue_pkts"], down).to_numpy()
    mqb = pc.filter(links["mean_queue_bytes"], down).to_numpy()
    util = float(s["utilization_down"])
    pkts = float(pc.sum(pc.filter(links["delivered_pkts"], down)).as_py() or 0)
    nbytes = float(pc.sum(pc.filter(links["delivered_bytes"], down)).as_py() or 0)
    k = int(np.floor(delay_s * capacity_bps / (8 * packet_bytes) + 1e-9))
    qs = result.queue_samples
    qb = pc.filter(qs["queue_bytes"], pc.equal(qs["link"], "bottleneck_down")).to_numpy()
    soj = result.sojourn
    sdown = pc.equal(soj["link"], "bottleneck_down")
    start = pc.filter(soj["bin_start_ms"], sdown).to_numpy()
    pk = pc.filter(soj["packets"], sdown).to_numpy().astype(np.float64)
    return {
        "utilization": util,
        "mean_queue_pkts": float(mqb.mean()) / packet_bytes + util if len(mqb) else float("nan"),
        "mean_queue_pkts_any_size": float(mq.mean()) + util if len(mq) else float("nan"),
        "p_delay_gt": float((qb >= k * packet_bytes).mean()) if len(qb) else float("nan"),
        "p_sojourn_gt": float(pk[start >= delay_s * 1e3].sum() / pk.sum()) if pk.sum() else 0.0,
        "loss_rate": float(s["loss_rate_down"]),
        "delivered_pkts": pkts,
        "delivered_bytes": nbytes,
        "window_s": float(s["window_s"]),
        "threshold_pkts": float(k),
        "wall_s": float(s["wall_s"]),
    }


def simulate_queue(
    sizes: SizeDistribution,
    capacity_bps: float,
    load: float,
    seed: int,
    **scenario_kw: Any,
) -> dict[str, float]:
    """One run of :func:`burst_scenario`, reduced by :func:`measure_queue`."""
    sc = burst_scenario(sizes, capacity_bps, load, **scenario_kw)
    res = run(sc, seed=seed, progress=False)
    out = measure_queue(res, capacity_bps)
    out.update(capacity_bps=capacity_bps, load=load, seed=float(seed))
    return out


def _call(job: tuple[Callable[..., T], tuple[Any, ...], dict[str, Any]]) -> T:
    fn, args, kw = job
    return fn(*args, **kw)


def run_many(
    jobs: Sequence[tuple[Callable[..., T], tuple[Any, ...], dict[str, Any]]],
    workers: int | None = None,
) -> list[T]:
    """Run independent ``(fn, args, kwargs)`` jobs over ``workers`` processes (default: the
    CPU count), results in job order."""
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(jobs) <= 1:
        return [_call(j) for j in jobs]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_call, jobs))


# --- one long-lived flow against the buffer (seed 002 Fig. 1) ---------------------------


def one_flow_scenario(
    buffer_pkts: int,
    *,
    capacity_bps: float = 10e6,
    rtt_ms: float = 100.0,
    beta: float = 0.5,
    duration_s: float = 300.0,
    warmup_s: float = 60.0,
    timeout_ssthresh: str | None = None,
) -> dict[str, Any]:
    """One NewReno bulk download through a DropTail queue of ``buffer_pkts`` packets.

    Access links are 100 times faster than the bottleneck and add no delay, so the path
    RTT is the bottleneck's: ``delay_ms = rtt_ms / 2``. The warm-up hides slow start.
    ``timeout_ssthresh`` sets ``tcp.timeout_ssthresh`` (default: the profile's, RFC 5681).
    """
    if buffer_pkts < 1:
        raise ValueError(f"buffer ({buffer_pkts} packets) must be at least 1")
    tcp: dict[str, Any] = {"profile": "rfc6298", "beta": beta}
    if timeout_ssthresh is not None:
        tcp["timeout_ssthresh"] = timeout_ssthresh
    return {
        "name": f"one-flow-b{buffer_pkts}",
        "duration_s": duration_s,
        "warmup_s": warmup_s,
        "topology": {
            "access_rate_bps": 100 * capacity_bps,
            "bottleneck": {
                "rate_bps": capacity_bps,
                "delay_ms": rtt_ms / 2.0,
                "queue": {"limit_pkts": buffer_pkts, "aqm": {"kind": "droptail"}},
            },
        },
        "tcp": tcp,
        "workloads": [{"kind": "bulk", "flows": 1, "direction": "down"}],
        "metrics": {"queue_sample_ms": 0},
    }


def simulate_one_flow(buffer_pkts: int, seed: int = 1, **kw: Any) -> dict[str, float]:
    """Utilisation of the down direction with one flow (see :func:`one_flow_scenario`)."""
    res = run(one_flow_scenario(buffer_pkts, **kw), seed=seed, progress=False)
    s = res.summary
    return {
        "buffer_pkts": float(buffer_pkts),
        "utilization": float(s["utilization_down"]),
        "loss_rate": float(s["loss_rate_down"]),
        "rtos": float(pc.sum(res.flows["rtos"]).as_py() or 0),
        "wall_s": float(s["wall_s"]),
    }


# --- TCP under random loss (Mathis, PFTK) -----------------------------------------------


def random_loss_scenario(
    p: float,
    *,
    flows: int = 10,
    rtt_ms: float = 100.0,
    capacity_bps: float = 1e9,
    duration_s: float = 300.0,
    warmup_s: float = 20.0,
) -> dict[str, Any]:
    """``flows`` NewReno bulk downloads through a bottleneck that loses each packet with
    probability ``p`` and is fast enough never to queue: only random loss limits them."""
    return {
        "name": f"random-loss-{p:g}",
        "duration_s": duration_s,
        "warmup_s": warmup_s,
        "topology": {
            "clients": flows,
            "servers": flows,
            "access_rate_bps": 10 * capacity_bps,
            "bottleneck": {
                "rate_bps": capacity_bps,
                "delay_ms": rtt_ms / 2.0,
                "random_loss": p,
                "queue": {"limit_pkts": 100_000, "aqm": {"kind": "droptail"}},
            },
        },
        "tcp": {"profile": "rfc6298"},
        "workloads": [{"kind": "bulk", "flows": flows, "direction": "down"}],
        "metrics": {"queue_sample_ms": 0},
    }


def simulate_random_loss(p: float, seed: int = 1, **kw: Any) -> dict[str, float]:
    """Mean per-flow goodput and the measured loss rate of the data direction."""
    sc = random_loss_scenario(p, **kw)
    res = run(sc, seed=seed, progress=False)
    s = res.summary
    flows = res.flows
    window = float(s["window_s"])
    goodput = flows["goodput_bytes"].to_numpy().astype(np.float64) / window
    return {
        "p": p,
        "loss_rate": float(s["loss_rate_down"]),
        "goodput_Bps": float(goodput.mean()),
        "goodput_Bps_std": float(goodput.std(ddof=1)) if len(goodput) > 1 else 0.0,
        "rtos_per_flow": float(flows["rtos"].to_numpy().mean()),
        "flows": float(len(goodput)),
        "rtt_s": sc["topology"]["bottleneck"]["delay_ms"] * 2e-3,
        "wall_s": float(s["wall_s"]),
    }
