"""The M^[X]/M/1 queue of seed 000 section 5.2.2 (Kuzmanovic, SIGCOMM 2005).

Bursts of packets arrive as a Poisson process of rate ``lam``; burst sizes are i.i.d. with
distribution ``g`` (``g[k]`` = P(X = k), k >= 1); one server serves packets at exponential
rate ``mu``. The load is ``rho = lam E[X] / mu``.

Burst sizes come from flows: a flow of ``s`` segments leaves its sender in slow start as bursts
of 2, 4, 8, ... segments, doubled once per round trip from the initial window of 2 and capped
by the receiver window ``W`` (8, 16 or 64 kB with probability 0.20, 0.35, 0.45), the last
burst holding what is left. See :func:`flow_bursts` for how we read the seed's formulas.

Mean queue (seed eq. 1; N counts the packet in service)::

    E[N] = rho / (1 - rho) * (E[X] + E[X^2]) / (2 E[X])

Stationary distribution: the level-crossing balance of the continuous-time chain. In steady
state the rate of jumps from {N <= n} up to {N > n} equals the rate of departures from
n + 1 down to n::

    mu p[n+1] = lam * sum_{j=0..n} p[j] P(X > n - j),      p[0] = 1 - rho

Every term is non-negative, so the recursion loses no precision (unlike solving the
truncated linear system or inverting the generating function), p[0..K] are exact without
truncating the state space, and with bounded bursts it is a linear recurrence of order
max(X) that ``scipy.signal.lfilter`` runs in C.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .sizes import SizeDistribution
from .throughput import DEFAULT_MSS

__all__ = [
    "DEFAULT_PACKET_BYTES",
    "RWND_MIX",
    "BurstModel",
    "burst_pmf",
    "flow_bursts",
    "mean_queue",
    "queue_pmf",
    "tail_prob",
]

# Seed 000 footnote 4 (measurements of its reference [27]): advertised receiver windows.
# kB read as 1024 bytes (TCP windows are powers of two; 64 kB is the unscaled maximum).
RWND_MIX: tuple[tuple[int, float], ...] = ((8192, 0.20), (16384, 0.35), (65535, 0.45))
DEFAULT_PACKET_BYTES = 1500  # MSS + 40 header bytes: the size of a full segment on the wire
DEFAULT_INITIAL_WINDOW = 2


def flow_bursts(size_segments: int, wmax: int, initial_window: int = 2) -> list[int]:
    """The bursts in which one flow of ``size_segments`` segments reaches the queue.

    Seed 000 writes X_s = {2, ..., 2^(n-1), R_s} with R_s = s mod (2^n - 1) for flows that never
    reach the window limit, and X_l = {1, 2, ..., W, ..., W, R_l} for those that do. The two are
    not consistent with each other or with the text (the initial window of two segments; a
    geometric series from 2 sums to 2^n - 2, not 2^n - 1; and "mod" is not the remainder of a
    partial sum). We read it as: the first burst is ``initial_window``, each next burst doubles
    the previous one but never exceeds ``wmax``, and the last burst is whatever is left
    (s minus the bursts already sent), which may be smaller than the burst it replaces.
    """
    if size_segments < 1:
        raise ValueError(f"size_segments ({size_segments}) must be at least 1")
    if wmax < 1 or initial_window < 1:
        raise ValueError(f"wmax ({wmax}) and initial_window ({initial_window}) must be >= 1")
    bursts = []
    left = size_segments
    w = min(initial_window, wmax)
    while left > 0:
        b = min(w, left)
        bursts.append(b)
        left -= b
        w = min(2 * w, wmax)
    return bursts


def _burst_counts(
    flow_pmf: NDArray[np.float64], wmax: int, initial_window: int
) -> NDArray[np.float64]:
    """Expected number of bursts of each size per flow, for one window limit.

    ``flow_pmf[n]`` = P(flow = n segments). Vectorised over n: the ramp (bursts below
    ``wmax``) is the same for every flow, so only its prefix sums, the count of full bursts of
    ``wmax`` and the remainder depend on n.
    """
    n_max = len(flow_pmf) - 1
    counts = np.zeros(wmax + 1)
    ramp = []
    w = min(initial_window, wmax)
    while w < wmax:
        ramp.append(w)
        w = min(2 * w, wmax)
    ramp_cum = np.cumsum([0, *ramp])  # ramp_cum[k]: segments in the first k ramp bursts
    n = np.arange(n_max + 1)
    p = flow_pmf
    # Ramp bursts: burst k (size ramp[k]) is sent whole if the flow has more than
    # ramp_cum[k] + ramp[k] - 1 segments, i.e. at least ramp_cum[k+1].
    for k, r in enumerate(ramp):
        counts[r] += p[n >= ramp_cum[k + 1]].sum()
    # Flows that end inside the ramp: remainder n - ramp_cum[k] for the k with
    # ramp_cum[k] < n < ramp_cum[k+1].
    for k in range(len(ramp)):
        inside = (n > ramp_cum[k]) & (n < ramp_cum[k + 1])
        rem = n[inside] - ramp_cum[k]
        np.add.at(counts, rem, p[inside])
    # Flows past the ramp: full bursts of wmax, then the remainder.
    past = n > ramp_cum[-1]
    extra = n[past] - ramp_cum[-1]
    counts[wmax] += float((p[past] * (extra // wmax)).sum())
    rem = extra % wmax
    nz = rem > 0
    np.add.at(counts, rem[nz], p[past][nz])
    return counts


def burst_pmf(
    flow_pmf: NDArray[np.float64],
    rwnd_mix: Sequence[tuple[int, float]] = RWND_MIX,
    mss: int = DEFAULT_MSS,
    initial_window: int = DEFAULT_INITIAL_WINDOW,
) -> tuple[NDArray[np.float64], float]:
    """Burst-size pmf and the mean number of bursts per flow.

    The burst distribution is the size of a burst picked at random among all bursts, so each
    flow contributes its bursts in proportion to their count:
    ``P(X = k) = E[bursts of size k per flow] / E[bursts per flow]``, the expectation taken
    over the flow size and the receiver window (drawn independently, as in the simulator).
    """
    flow_pmf = np.asarray(flow_pmf, dtype=np.float64)
    total = np.zeros(1)
    for rwnd, weight in rwnd_mix:
        wmax = max(1, rwnd // mss)
        c = _burst_counts(flow_pmf, wmax, initial_window) * weight
        if len(c) > len(total):
            total = np.pad(total, (0, len(c) - len(total)))
        total[: len(c)] += c
    per_flow = float(total.sum())
    return total / per_flow, per_flow


def moments(g: NDArray[np.float64]) -> tuple[float, float]:
    """E[X] and E[X^2] of a pmf over 0, 1, 2, ..."""
    k = np.arange(len(g), dtype=np.float64)
    return float((k * g).sum()), float((k * k * g).sum())


def mean_queue(g: NDArray[np.float64], rho: float) -> float:
    """Seed 000 eq. (1): mean number in system of the M^[X]/M/1 queue."""
    _check_rho(rho)
    ex, ex2 = moments(g)
    return rho / (1.0 - rho) * (ex + ex2) / (2.0 * ex)


def queue_pmf(g: NDArray[np.float64], rho: float, n_max: int) -> NDArray[np.float64]:
    """P(N = n) for n = 0..n_max, by the level-crossing recursion (module docstring).

    Exact for every n <= n_max (no truncation of the state space is involved).
    """
    from scipy.signal import lfilter  # imported here: it takes ~0.5 s, the CLI starts without it

    _check_rho(rho)
    g = np.asarray(g, dtype=np.float64)
    if g[0] != 0.0:
        raise ValueError("burst pmf must have P(X = 0) = 0")
    ex, _ = moments(g)
    lam_over_mu = rho / ex
    tail = 1.0 - np.cumsum(g)  # tail[m] = P(X > m)
    tail = np.clip(tail[:-1], 0.0, None)  # P(X > m) for m = 0..max(X)-1
    # p[n] = lam/mu * sum_{m=0}^{M-1} tail[m] p[n-1-m] for n >= 1: an all-pole filter
    # driven by an impulse of height p[0].
    a = np.concatenate(([1.0], -lam_over_mu * tail))
    impulse = np.zeros(n_max + 1)
    impulse[0] = 1.0 - rho
    return lfilter([1.0], a, impulse)


def tail_prob(g: NDArray[np.float64], rho: float, k: int) -> float:
    """P(N > k)."""
    p = queue_pmf(g, rho, k)
    return float(max(0.0, 1.0 - p.sum()))


def _check_rho(rho: float) -> None:
    if not 0.0 < rho < 1.0:
        raise ValueError(f"load ({rho}) must be in (0, 1)")


@dataclass(frozen=True)
class BurstModel:
    """The M^[X]/M/1 model of a link carrying flows of a given size distribution.

    ``capacity_bps`` and ``packet_bytes`` turn packets into time: the server's mean service
    time is one ``packet_bytes`` packet at ``capacity_bps``.
    """

    g: NDArray[np.float64]
    bursts_per_flow: float
    capacity_bps: float
    packet_bytes: int = DEFAULT_PACKET_BYTES

    @classmethod
    def from_sizes(
        cls,
        sizes: SizeDistribution,
        capacity_bps: float,
        *,
        mss: int = DEFAULT_MSS,
        header_bytes: int = 40,
        initial_window: int = DEFAULT_INITIAL_WINDOW,
        rwnd_mix: Sequence[tuple[int, float]] = RWND_MIX,
    ) -> BurstModel:
        if not capacity_bps > 0:
            raise ValueError(f"capacity ({capacity_bps} b/s) must be positive")
        g, per_flow = burst_pmf(sizes.segments_pmf(mss), rwnd_mix, mss, initial_window)
        return cls(g, per_flow, capacity_bps, mss + header_bytes)

    @classmethod
    def from_flow_segments(
        cls,
        segments: int,
        capacity_bps: float,
        *,
        mss: int = DEFAULT_MSS,
        header_bytes: int = 40,
        initial_window: int = DEFAULT_INITIAL_WINDOW,
        rwnd_mix: Sequence[tuple[int, float]] = RWND_MIX,
    ) -> BurstModel:
        """Every flow is ``segments`` segments long (seed 000 Figure 7)."""
        pmf = np.zeros(segments + 1)
        pmf[segments] = 1.0
        g, per_flow = burst_pmf(pmf, rwnd_mix, mss, initial_window)
        return cls(g, per_flow, capacity_bps, mss + header_bytes)

    @property
    def service_rate_pps(self) -> float:
        return self.capacity_bps / (8.0 * self.packet_bytes)

    def moments(self) -> tuple[float, float]:
        return moments(self.g)

    def mean_queue_pkts(self, rho: float) -> float:
        return mean_queue(self.g, rho)

    def threshold_pkts(self, delay_s: float) -> int:
        """The largest n for which n packets wait no longer than ``delay_s``; ``N > k`` is
        then "more than ``delay_s`` of work queued" (seed 000: queue above 5 ms * C)."""
        return int(np.floor(delay_s * self.service_rate_pps + 1e-9))

    def p_delay_gt(self, rho: float, delay_s: float = 0.005) -> float:
        return tail_prob(self.g, rho, self.threshold_pkts(delay_s))

    def queue_pmf(self, rho: float, n_max: int) -> NDArray[np.float64]:
        return queue_pmf(self.g, rho, n_max)
