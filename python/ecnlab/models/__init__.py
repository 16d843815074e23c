"""Analytical models beside the simulator (derivations: ``docs/models/analytic.md``).

* :func:`mx_m_1`: the M^[X]/M/1 queue of seed 000 section 5.2.2, fed by TCP slow-start bursts;
* :func:`buffer`: the buffer one AIMD flow needs, and its utilisation below it (seed 002 II-A);
* :func:`tcp_throughput`: Mathis et al. (1997) and Padhye et al. (1998) under random loss.

Each returns a flat dictionary (what ``ecnlab model ... --json`` prints). The building blocks
live in :mod:`.mxm1`, :mod:`.buffer_sizing`, :mod:`.throughput`; the simulations that check them
in :mod:`.validate`, the figures in :mod:`.figures`.
"""

from __future__ import annotations

import math
from typing import Any

from . import buffer_sizing as _buffer
from . import throughput as _tput
from .throughput import DEFAULT_MSS

# .mxm1 and .sizes (numpy) load in mx_m_1: importing the package (ecnlab's CLI registers the
# model commands) must not cost every command numpy.

__all__ = ["buffer", "mx_m_1", "tcp_throughput"]


def mx_m_1(
    capacity_mbps: float,
    load: float,
    *,
    sizes: str = "web",
    flow_segments: int | None = None,
    delay_ms: float = 5.0,
    mss_bytes: int = DEFAULT_MSS,
    initial_window: int = 2,
) -> dict[str, Any]:
    """The M^[X]/M/1 model of a link of ``capacity_mbps`` at ``load``.

    ``sizes``: ``web`` or ``general`` flow-size distribution (workloads spec 3.1, 3.2), unless
    ``flow_segments`` makes every flow that many segments (seed 000 Figure 7).
    """
    from .mxm1 import BurstModel
    from .sizes import size_distribution

    if not capacity_mbps > 0:
        raise ValueError(f"capacity ({capacity_mbps} Mb/s) must be positive")
    if not 0.0 < load < 1.0:
        raise ValueError(f"load ({load}) must be in (0, 1)")
    if not delay_ms >= 0:
        raise ValueError(f"delay ({delay_ms} ms) must be >= 0")
    if mss_bytes < 1 or initial_window < 1:
        raise ValueError(f"mss ({mss_bytes}) and initial window ({initial_window}) must be >= 1")
    c = capacity_mbps * 1e6
    if flow_segments is not None:
        if flow_segments < 1:
            raise ValueError(f"flow length ({flow_segments} segments) must be at least 1")
        model = BurstModel.from_flow_segments(
            flow_segments, c, mss=mss_bytes, initial_window=initial_window
        )
        label = f"constant {flow_segments} segments"
        mean_flow = float(flow_segments * mss_bytes)
    else:
        dist = size_distribution(sizes)
        model = BurstModel.from_sizes(dist, c, mss=mss_bytes, initial_window=initial_window)
        label = sizes
        mean_flow = dist.mean_bytes()
    ex, ex2 = model.moments()
    mean_q = model.mean_queue_pkts(load)
    return {
        "model": "mx-m-1",
        "capacity_bps": c,
        "load": load,
        "sizes": label,
        "mean_flow_bytes": mean_flow,
        "mss_bytes": mss_bytes,
        "packet_bytes": model.packet_bytes,
        "initial_window_segments": initial_window,
        "bursts_per_flow": model.bursts_per_flow,
        "mean_burst_pkts": ex,
        "mean_burst_sq_pkts2": ex2,
        "max_burst_pkts": len(model.g) - 1,
        "mean_queue_pkts": mean_q,
        "mean_queue_delay_ms": mean_q / model.service_rate_pps * 1e3,
        "delay_ms": delay_ms,
        "threshold_pkts": model.threshold_pkts(delay_ms / 1e3),
        "p_delay_gt": model.p_delay_gt(load, delay_ms / 1e3),
        "p_delay_gt_5ms": model.p_delay_gt(load, 0.005),
    }


def buffer(
    *,
    capacity_mbps: float = 10.0,
    rtt_ms: float = 100.0,
    beta: float = 0.5,
    buffer_pkts: float | None = None,
    packet_bytes: int = 1500,
) -> dict[str, Any]:
    """Seed 002 eq. (1) for a path, and the one-flow utilisation at ``buffer_pkts``."""
    bdp = _buffer.bdp_pkts(capacity_mbps * 1e6, rtt_ms / 1e3, packet_bytes)
    b_min = _buffer.min_buffer_pkts(bdp, beta)
    out: dict[str, Any] = {
        "model": "buffer",
        "capacity_bps": capacity_mbps * 1e6,
        "rtt_ms": rtt_ms,
        "beta": beta,
        "packet_bytes": packet_bytes,
        "bdp_pkts": bdp,
        "min_buffer_pkts": b_min,
        "min_buffer_bytes": b_min * packet_bytes,
        "min_buffer_ms": b_min * packet_bytes * 8 / (capacity_mbps * 1e6) * 1e3,
    }
    if buffer_pkts is not None:
        out["buffer_pkts"] = buffer_pkts
        out["utilization"] = _buffer.utilization(buffer_pkts, bdp, beta)
    return out


def tcp_throughput(
    loss: float,
    *,
    rtt_ms: float = 100.0,
    mss_bytes: int = DEFAULT_MSS,
    rto_s: float = 1.0,
    acked_per_ack: int = 2,
    wmax_pkts: float = math.inf,
) -> dict[str, Any]:
    """Mathis and PFTK throughput of one long-lived flow, in bits per second of payload."""
    rtt = rtt_ms / 1e3
    c = _tput.mathis_constant(acked_per_ack)
    return {
        "model": "tcp-throughput",
        "loss": loss,
        "rtt_ms": rtt_ms,
        "mss_bytes": mss_bytes,
        "rto_s": rto_s,
        "acked_per_ack": acked_per_ack,
        "mathis_constant": c,
        "mathis_bps": 8 * _tput.mathis(mss_bytes, rtt, loss, c),
        "pftk_bps": 8 * _tput.pftk(mss_bytes, rtt, loss, rto_s, acked_per_ack, wmax_pkts),
    }
