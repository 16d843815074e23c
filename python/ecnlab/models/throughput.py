"""Throughput of a long-lived TCP flow under random loss.

Mathis, Semke, Mahdavi and Ott, "The macroscopic behavior of the TCP congestion avoidance
algorithm" (CCR 1997): a flow that loses one packet every 1/p packets and halves its window
each time draws a periodic sawtooth between W/2 and W, which delivers 3W^2/8 packets per
cycle, one cycle per loss; solving for W gives::

    B = (MSS / RTT) * C / sqrt(p),     C = sqrt(3 / (2 b))

with ``b`` segments acknowledged per ACK (1.22 for b = 1, 0.87 for delayed ACKs, b = 2).
The model assumes no retransmission timeouts, enough receiver window and a sender that
always has data: light to moderate loss.

Padhye, Firoiu, Towsley and Kurose, "Modeling TCP throughput: a simple model and its
empirical validation" (SIGCOMM 1998, "PFTK") add timeouts and the receiver window; their
widely used approximation (their eq. 33) is::

    B = min(Wmax / RTT,
            1 / (RTT sqrt(2 b p / 3) + T0 min(1, 3 sqrt(3 b p / 8)) p (1 + 32 p^2)))

in packets per second, with T0 the retransmission timeout. Both formulas count p as the
probability that a packet is lost.
"""

from __future__ import annotations

import math

__all__ = ["DEFAULT_MSS", "mathis", "mathis_constant", "pftk"]

DEFAULT_MSS = 1460
"""The segment size the models assume unless told (bytes); here, with no numpy, so the
package imports light."""


def _check(rtt_s: float, p: float) -> None:
    if not rtt_s > 0:
        raise ValueError(f"rtt ({rtt_s} s) must be positive")
    if not 0.0 < p < 1.0:
        raise ValueError(f"loss probability ({p}) must be in (0, 1)")


def mathis_constant(acked_per_ack: int = 2) -> float:
    """C = sqrt(3 / (2 b)) of the periodic-loss derivation."""
    if acked_per_ack < 1:
        raise ValueError(f"segments per ACK ({acked_per_ack}) must be at least 1")
    return math.sqrt(3.0 / (2.0 * acked_per_ack))


def mathis(mss_bytes: float, rtt_s: float, p: float, c: float | None = None) -> float:
    """Throughput in payload bytes per second (Mathis et al. 1997)."""
    _check(rtt_s, p)
    c = mathis_constant(2) if c is None else c
    return mss_bytes / rtt_s * c / math.sqrt(p)


def pftk(
    mss_bytes: float,
    rtt_s: float,
    p: float,
    rto_s: float,
    acked_per_ack: int = 2,
    wmax_pkts: float = math.inf,
) -> float:
    """Throughput in payload bytes per second (Padhye et al. 1998, approximation eq. 33)."""
    _check(rtt_s, p)
    if not rto_s > 0:
        raise ValueError(f"rto ({rto_s} s) must be positive")
    b = acked_per_ack
    denom = rtt_s * math.sqrt(2.0 * b * p / 3.0) + rto_s * min(
        1.0, 3.0 * math.sqrt(3.0 * b * p / 8.0)
    ) * p * (1.0 + 32.0 * p * p)
    return mss_bytes * min(wmax_pkts / rtt_s, 1.0 / denom)
