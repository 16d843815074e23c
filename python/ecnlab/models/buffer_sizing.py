"""Buffer sizing for one long-lived AIMD flow (seed 002 section II-A, Khademi et al.).

A flow whose window grows by a fixed amount per round trip and falls to ``beta`` times its
peak on each loss keeps a DropTail bottleneck of capacity C busy all the time only if the
window after a backoff still covers the path's bandwidth-delay product delta = C * RTT.
The window peaks at b + delta (buffer full), so full utilisation needs
beta (b + delta) >= delta, i.e.::

    b >= delta (1 - beta) / beta                                  (seed 002 eq. 1)

Below that buffer the link idles for part of each sawtooth. Our throughput model is the
deterministic sawtooth (no slow start, no timeouts, one backoff per overflow). With
W0 = beta W1, W1 = b + delta and W0 < delta:

* while W < delta the queue is empty, the round trip is RTT and the sender delivers W per
  RTT: from W0 to delta it sends (delta^2 - W0^2) / (2 a) packets in (delta - W0) RTT / a;
* while W > delta the link is busy and the round trip is W / C, so the window grows at
  a C / W per second: from delta to W1 takes (W1^2 - delta^2) / (2 a C) seconds at rate C.

The growth rate ``a`` (packets per RTT) cancels, leaving::

    U = (W1^2 - W0^2) / (2 delta (delta - W0) + W1^2 - delta^2)

For beta = 0.5 and b = 0 this is 3/4, the classic figure for a bufferless link.
"""

from __future__ import annotations

__all__ = ["bdp_pkts", "min_buffer_pkts", "utilization"]


def _check_beta(beta: float) -> None:
    if not 0.0 < beta < 1.0:
        raise ValueError(f"beta ({beta}) must be in (0, 1)")


def bdp_pkts(capacity_bps: float, rtt_s: float, packet_bytes: int = 1500) -> float:
    """delta = C * RTT, in packets of ``packet_bytes`` on the wire."""
    if not capacity_bps > 0 or not rtt_s > 0:
        raise ValueError(f"capacity ({capacity_bps} b/s) and RTT ({rtt_s} s) must be positive")
    return capacity_bps * rtt_s / (8.0 * packet_bytes)


def min_buffer_pkts(bdp: float, beta: float) -> float:
    """Seed 002 eq. (1): the smallest buffer that keeps the link busy, in the unit of ``bdp``."""
    _check_beta(beta)
    return bdp * (1.0 - beta) / beta


def utilization(buffer: float, bdp: float, beta: float) -> float:
    """Long-run link utilisation of one sawtooth flow (module docstring); ``buffer`` and
    ``bdp`` in the same unit."""
    _check_beta(beta)
    if buffer < 0 or not bdp > 0:
        raise ValueError(f"buffer ({buffer}) must be >= 0 and bdp ({bdp}) positive")
    w1 = buffer + bdp
    w0 = beta * w1
    if w0 >= bdp:
        return 1.0
    return (w1 * w1 - w0 * w0) / (2.0 * bdp * (bdp - w0) + w1 * w1 - bdp * bdp)
