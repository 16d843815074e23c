"""The start-up transient of the seed 004 workloads, derived from their size distributions.

A run starts with an empty network. At time ``a`` it misses the bytes that transfers begun
before time 0 would still be delivering: in a stationary system, the share of the long-run load
carried by transfers older than ``a``. Each transfer here is window-limited (16 kB per RTT, the
seed's windows; on the uncongested 1 Gb/s link nothing else limits it), with the RTT uniform on
the whole milliseconds 10..150, so a transfer of S bytes lasts ``S * RTT / 16384`` s and
delivers at a constant rate; slow start only shortens it (the transient is, if anything,
slightly over-stated).

* PackMime-HTTP (``http.toml``): downloads (72.4% of responses; the rest are cache validations
  of at most 275 B) have the size quantile of ns-2's download table, which ecnlab (like ns-2's
  ``FX::LinearInterpolate``) extrapolates linearly past its ends in (log2(1 - p), log2 bytes):
  a Pareto tail of index 1.23 without an upper bound (p drawn in double precision stops at
  2^-53). The mean is 8623 B (docs/models/workloads.md: exact 8.62 kB).
* The general TCP mix (``tcp-mix.toml``): 94.28% truncated Lomax TL(1720 B, 1.2, 37.2 MB),
  5.72% bounded Pareto on [100 kB, 100 MB] with index 1.1.

Run from the repository: ``python python/ecnlab/reproduce/data/dcn/transient.py``. The numbers
are in docs/reproduction/dcn.md ("Warm-up").
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

TABLES = (
    Path(__file__).resolve().parents[5] / "crates" / "ecnlab" / "data" / "packmime_http_tables.json"
)
WINDOW_BYTES = 16384
RTTS_S = np.arange(10, 151) / 1000
AGES_S = (60, 120, 300, 600, 750, 900, 1200, 1800, 3600, 7200)


def missing_share(
    sizes: np.ndarray, weights: np.ndarray, ages: tuple[int, ...]
) -> dict[int, float]:
    """Share of the long-run bytes delivered after age ``a`` by transfers of ``sizes`` (with
    probability ``weights``, summing to 1), each at its window-limited rate."""
    total = float(np.sum(weights * sizes))
    out = {}
    for a in ages:
        late = 0.0
        for rtt in RTTS_S:
            duration = sizes * rtt / WINDOW_BYTES
            late += float(np.sum(weights * np.where(duration > a, sizes * (1 - a / duration), 0.0)))
        out[a] = late / len(RTTS_S) / total
    return out


def packmime_downloads(points: int = 400_001) -> tuple[np.ndarray, np.ndarray]:
    """Download sizes on a grid of u = log2(1 - p) from -53 to 0, with their probabilities."""
    tables = json.loads(TABLES.read_text(encoding="utf-8"))["tables"]
    x = np.array(tables["FileSize.FSIZE0_INVCDF_B_X"])
    y = np.array(tables["FileSize.FSIZE0_INVCDF_B_Y"])
    order = np.argsort(x)
    x, y = x[order], y[order]
    edges = np.linspace(-53.0, 0.0, points)
    u = (edges[1:] + edges[:-1]) / 2
    weights = 2.0 ** edges[1:] - 2.0 ** edges[:-1]  # P(u in the cell) for p uniform
    log2_size = np.interp(u, x, y)
    low, high = u < x[0], u > x[-1]
    log2_size[low] = y[0] + (y[1] - y[0]) / (x[1] - x[0]) * (u[low] - x[0])
    log2_size[high] = y[-1] + (y[-1] - y[-2]) / (x[-1] - x[-2]) * (u[high] - x[-1])
    return 2.0**log2_size, weights / weights.sum()


def packmime() -> tuple[float, dict[int, float]]:
    sizes, weights = packmime_downloads()
    downloads = 1 - 0.276
    validation_bytes = 150.0  # at most 275 B: a negligible share of the bytes either way
    s = np.r_[sizes, validation_bytes]
    w = np.r_[downloads * weights, 1 - downloads]
    return float(np.sum(s * w)), missing_share(s, w, AGES_S)


def tcp_mix(points: int = 400_001) -> tuple[float, dict[int, float]]:
    q = (np.arange(points) + 0.5) / points
    h = 37.2e6
    top = 1 - (1 + h / 1720) ** -1.2
    mice = 1720 * ((1 - q * top) ** (-1 / 1.2) - 1)
    lo, hi, k = 1e5, 1e8, 1.1
    elephants = (lo**-k - q * (lo**-k - hi**-k)) ** (-1 / k)
    s = np.r_[mice, elephants]
    w = np.r_[np.full(points, 0.9428 / points), np.full(points, 0.0572 / points)]
    return float(np.sum(s * w)), missing_share(s, w, AGES_S)


if __name__ == "__main__":
    for name, (mean, missing) in (("PackMime-HTTP", packmime()), ("general TCP mix", tcp_mix())):
        print(f"{name}: mean transfer {mean:.0f} B; share of the long-run load missing at age a:")
        print("  " + ", ".join(f"{a} s: {100 * m:.2f}%" for a, m in missing.items()))
