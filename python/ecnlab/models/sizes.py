"""Flow-size distributions as probability mass functions over whole segments.

The queueing model counts packets, so a flow of ``s`` payload bytes is ``ceil(s / mss)``
segments. Each distribution here is the same one the simulator draws from (workloads spec,
``/work/shared/specs/workloads.md`` section 3), discretised exactly through its CDF:
``P(N = n) = F(n * mss) - F((n - 1) * mss)``. The simulator rounds sizes up to whole bytes
first, which cannot move a size across a multiple of ``mss``, so the discretisation is exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "GENERAL_ELEPHANT",
    "GENERAL_P_ELEPHANT",
    "WEB",
    "BoundedPareto",
    "Constant",
    "Mixture",
    "SizeDistribution",
    "TruncatedLomax",
    "general_tcp_mix",
    "size_distribution",
]


class SizeDistribution:
    """A distribution of flow sizes in bytes."""

    def cdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        raise NotImplementedError

    @property
    def max_bytes(self) -> float:
        raise NotImplementedError

    def mean_bytes(self) -> float:
        raise NotImplementedError

    def segments_pmf(self, mss: int) -> NDArray[np.float64]:
        """``pmf[n]`` = P(the flow is ``n`` segments of ``mss`` bytes); ``pmf[0]`` = 0.

        Sizes of at most ``mss`` bytes are one segment (the simulator sends at least one byte).
        """
        n_max = int(np.ceil(self.max_bytes / mss))
        edges = np.arange(n_max + 1, dtype=np.float64) * mss
        f = self.cdf(edges)
        f[0] = 0.0  # every size is at least one byte, so at least one segment
        f[-1] = 1.0
        pmf = np.diff(f, prepend=0.0)
        pmf = np.clip(pmf, 0.0, None)
        return pmf / pmf.sum()

    def to_scenario(self) -> dict[str, Any]:
        """The same distribution as a scenario ``response_bytes`` table (docs/scenario.md)."""
        raise NotImplementedError


@dataclass(frozen=True)
class TruncatedLomax(SizeDistribution):
    """TL(s, alpha, H): Lomax with scale ``scale`` and shape ``shape``, cut at ``max``."""

    scale: float
    shape: float
    max: float

    def cdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.clip(np.asarray(x, dtype=np.float64), 0.0, self.max)
        c = 1.0 - (1.0 + self.max / self.scale) ** (-self.shape)
        return (1.0 - (1.0 + x / self.scale) ** (-self.shape)) / c

    @property
    def max_bytes(self) -> float:
        return self.max

    def mean_bytes(self) -> float:
        # X + s is a bounded Pareto on [s, H + s] with index alpha.
        return _bounded_pareto_mean(self.scale, self.max + self.scale, self.shape) - self.scale

    def to_scenario(self) -> dict[str, Any]:
        return {"dist": "lomax", "scale": self.scale, "shape": self.shape, "max": self.max}


@dataclass(frozen=True)
class BoundedPareto(SizeDistribution):
    """Pareto with index ``shape`` on ``[low, high]``."""

    low: float
    high: float
    shape: float

    def cdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.clip(np.asarray(x, dtype=np.float64), self.low, self.high)
        c = 1.0 - (self.low / self.high) ** self.shape
        return (1.0 - (self.low / x) ** self.shape) / c

    @property
    def max_bytes(self) -> float:
        return self.high

    def mean_bytes(self) -> float:
        return _bounded_pareto_mean(self.low, self.high, self.shape)

    def to_scenario(self) -> dict[str, Any]:
        return {"dist": "bounded_pareto", "low": self.low, "high": self.high, "shape": self.shape}


@dataclass(frozen=True)
class Constant(SizeDistribution):
    """Every flow is ``value`` bytes."""

    value: float

    def cdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return (np.asarray(x, dtype=np.float64) >= self.value).astype(np.float64)

    @property
    def max_bytes(self) -> float:
        return self.value

    def mean_bytes(self) -> float:
        return self.value

    def to_scenario(self) -> dict[str, Any]:
        return {"dist": "constant", "value": self.value}


@dataclass(frozen=True)
class Mixture(SizeDistribution):
    """``parts[i]`` with probability ``weights[i]`` (weights sum to 1)."""

    parts: tuple[SizeDistribution, ...]
    weights: tuple[float, ...]

    def cdf(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return sum(w * p.cdf(x) for p, w in zip(self.parts, self.weights))  # type: ignore[return-value]

    @property
    def max_bytes(self) -> float:
        return max(p.max_bytes for p in self.parts)

    def mean_bytes(self) -> float:
        return sum(w * p.mean_bytes() for p, w in zip(self.parts, self.weights))

    def to_scenario(self) -> dict[str, Any]:
        return {
            "dist": "mixture",
            "parts": [p.to_scenario() for p in self.parts],
            "weights": list(self.weights),
        }


def _bounded_pareto_mean(low: float, high: float, a: float) -> float:
    if a == 1.0:
        return low * high / (high - low) * np.log(high / low)
    c = 1.0 - (low / high) ** a
    return a * low**a / ((a - 1.0) * c) * (low ** (1.0 - a) - high ** (1.0 - a))


# Workloads spec 3.1: web responses, mean 7.2 kB, 90 % at most 10 kB.
WEB = TruncatedLomax(scale=1720.0, shape=1.2, max=37.2e6)
# Workloads spec 3.2: the general TCP mix, 94.28 % web "mice" and 5.72 % elephants.
GENERAL_P_ELEPHANT = 0.0572
GENERAL_ELEPHANT = BoundedPareto(low=100e3, high=100e6, shape=1.1)


def general_tcp_mix() -> Mixture:
    """Workloads spec 3.2: long flows (> 100 kB) carry ~90 % of the bytes."""
    return Mixture((WEB, GENERAL_ELEPHANT), (1.0 - GENERAL_P_ELEPHANT, GENERAL_P_ELEPHANT))


def size_distribution(name: str) -> SizeDistribution:
    """``web`` or ``general`` (the two named mixes of the workloads spec)."""
    if name == "web":
        return WEB
    if name == "general":
        return general_tcp_mix()
    raise ValueError(f"size distribution ({name!r}) must be 'web' or 'general'")
