"""Model-versus-simulation experiments and their figures (matplotlib, Agg backend).

Each experiment runs its simulations (in parallel), saves the numbers as JSON beside a PNG,
and draws the model as lines and the simulation as markers, as seed 000 Figures 7-9 and seed
002 Figure 1 do. ``quick`` shortens every run and uses one seed; the default (full) mode uses
three seeds and runs long enough for the heavy-tailed loads to settle (see
docs/models/analytic.md for the budgets).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from . import buffer_sizing as buf
from . import throughput as tput
from .mxm1 import BurstModel
from .sizes import Constant, size_distribution
from .validate import (
    run_many,
    simulate_one_flow,
    simulate_queue,
    simulate_random_loss,
)

__all__ = ["EXPERIMENTS", "run_experiments"]

CAPACITIES_BPS = (100e6, 155e6, 622e6)
SEEDS_FULL = (1, 2, 3)
BETAS = (0.5, 0.6, 0.7, 0.8, 0.9)


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _queue_durations(capacity_bps: float, quick: bool) -> dict[str, float]:
    # Heavy tails: rwnd-limited elephants take tens of seconds, so the load needs about a
    # minute to settle. 622 Mb/s costs ~0.35 wall s per simulated s.
    if quick:
        return (
            {"warmup_s": 20.0, "duration_s": 35.0}
            if capacity_bps < 300e6
            else {"warmup_s": 10.0, "duration_s": 20.0}
        )
    return (
        {"warmup_s": 60.0, "duration_s": 120.0}
        if capacity_bps < 300e6
        else {"warmup_s": 40.0, "duration_s": 80.0}
    )


def queue_tail(sizes: str, quick: bool, workers: int) -> dict[str, Any]:
    """P(queue delay > 5 ms) against load for 100/155/622 Mb/s (seed 000 Figs. 8, 9)."""
    dist = size_distribution(sizes)
    loads = (0.7, 0.85, 0.95) if quick else (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)
    seeds = (1,) if quick else SEEDS_FULL
    jobs = [
        (simulate_queue, (dist, c, load, seed), _queue_durations(c, quick))
        for c in CAPACITIES_BPS
        for load in loads
        for seed in seeds
    ]
    sims = run_many(jobs, workers)
    grid = np.round(np.arange(0.30, 0.991, 0.01), 3)
    model: dict[str, Any] = {}
    for c in CAPACITIES_BPS:
        m = BurstModel.from_sizes(dist, c)
        model[f"{c:g}"] = {
            "load": grid.tolist(),
            "p_delay_gt_5ms": [m.p_delay_gt(float(r)) for r in grid],
            "mean_queue_pkts": [m.mean_queue_pkts(float(r)) for r in grid],
        }
        for s in sims:
            if s["capacity_bps"] == c:
                s["model_p_delay_gt_5ms"] = m.p_delay_gt(s["utilization"])
                s["model_mean_queue_pkts"] = m.mean_queue_pkts(s["utilization"])
    return {"sizes": sizes, "model": model, "sim": sims}


def plot_queue_tail(data: dict[str, Any], path: Path) -> None:
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, log in zip(axes, (False, True)):
        for (key, m), color in zip(data["model"].items(), ("C0", "C1", "C2")):
            c = float(key)
            ax.plot(m["load"], m["p_delay_gt_5ms"], color=color, label=f"model {c / 1e6:g} Mb/s")
            pts = [s for s in data["sim"] if s["capacity_bps"] == c]
            ax.plot(
                [s["utilization"] for s in pts],
                [s["p_delay_gt"] for s in pts],
                "o",
                color=color,
                mfc="none",
                label=f"simulation {c / 1e6:g} Mb/s",
            )
        ax.set_xlabel("link utilization rho")
        ax.set_ylabel("P(queue delay > 5 ms)")
        ax.set_xlim(0.3, 1.0)
        if log:
            ax.set_yscale("log")
            ax.set_ylim(1e-4, 1)
        else:
            ax.set_ylim(0, 1)
        ax.grid(alpha=0.3, which="both")
    axes[0].legend(fontsize=7)
    fig.suptitle(
        f"M^[X]/M/1 vs FIFO simulation, {data['sizes']} flow sizes (zero not shown on log)"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def flow_length(quick: bool, workers: int) -> dict[str, Any]:
    """E[Q] against the length of equal-size flows at rho = 0.8 (seed 000 Fig. 7)."""
    c = 100e6
    lengths = (
        (1, 2, 4, 7, 15, 30, 60, 100)
        if quick
        else (1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 45, 60, 80, 100, 150)
    )
    seeds = (1,) if quick else SEEDS_FULL
    kw = {"warmup_s": 3.0, "duration_s": 13.0} if quick else {"warmup_s": 5.0, "duration_s": 45.0}
    mss = 1460
    jobs = [
        (simulate_queue, (Constant(float(n * mss)), c, 0.8, seed), kw)
        for n in lengths
        for seed in seeds
    ]
    sims = run_many(jobs, workers)
    for (_, (d, *_), _), s in zip(jobs, sims):
        n = round(d.value / mss)
        m = BurstModel.from_flow_segments(n, c)
        s["flow_segments"] = n
        s["model_mean_queue_pkts"] = m.mean_queue_pkts(s["utilization"])
    curve = list(range(1, 1001))
    model = [BurstModel.from_flow_segments(n, c).mean_queue_pkts(0.8) for n in curve]
    return {"model": {"flow_segments": curve, "mean_queue_pkts": model}, "sim": sims}


def plot_flow_length(data: dict[str, Any], path: Path) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4.2))
    ax.plot(data["model"]["flow_segments"], data["model"]["mean_queue_pkts"], label="model")
    ax.plot(
        [s["flow_segments"] for s in data["sim"]],
        [s["mean_queue_pkts"] for s in data["sim"]],
        "o",
        mfc="none",
        label="simulation (FIFO, 100 Mb/s)",
    )
    ax.set_xscale("log")
    ax.set_xlabel("flow length (segments)")
    ax.set_ylabel("mean queue E[Q] (packets)")
    ax.set_title("Equal-size flows at rho = 0.8")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def buffer_sizing(quick: bool, workers: int) -> dict[str, Any]:
    """One NewReno flow, 10 Mb/s, RTT 100 ms: utilisation against buffer (seed 002 Fig. 1)."""
    c, rtt = 10e6, 0.1
    # The pipe also holds the packet being sent: RTT plus one transmission time.
    bdp = buf.bdp_pkts(c, rtt + 1500 * 8 / c)
    fracs = np.linspace(0.05, 1.25, 9 if quick else 25)
    kw = (
        {"warmup_s": 40.0, "duration_s": 200.0}
        if quick
        else {"warmup_s": 60.0, "duration_s": 600.0}
    )
    betas = BETAS
    jobs = [
        (simulate_one_flow, (max(1, round(f * bdp)),), {**kw, "beta": beta})
        for beta in betas
        for f in fracs
    ]
    sims = run_many(jobs, workers)
    for (_, _, k), s in zip(jobs, sims):
        s["beta"] = k["beta"]
        s["model_utilization"] = buf.utilization(s["buffer_pkts"], bdp, k["beta"])
    grid = np.linspace(0.0, 1.3, 131)
    model = {
        f"{b:g}": {
            "buffer_over_bdp": grid.tolist(),
            "utilization": [buf.utilization(g * bdp, bdp, b) for g in grid],
            "min_buffer_over_bdp": buf.min_buffer_pkts(1.0, b),
        }
        for b in BETAS
    }
    return {"bdp_pkts": bdp, "simulated_betas": list(betas), "model": model, "sim": sims}


def plot_buffer(data: dict[str, Any], path: Path) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4.2))
    bdp = data["bdp_pkts"]
    for i, (b, m) in enumerate(data["model"].items()):
        color = f"C{i}"
        ax.plot(
            m["buffer_over_bdp"],
            [100 * u for u in m["utilization"]],
            color=color,
            label=f"model beta={b}",
        )
        pts = [s for s in data["sim"] if f"{s['beta']:g}" == b]
        if pts:
            ax.plot(
                [s["buffer_pkts"] / bdp for s in pts],
                [100 * s["utilization"] for s in pts],
                "o",
                color=color,
                mfc="none",
                label=f"simulation beta={b}",
            )
    for i, m in enumerate(data["model"].values()):
        ax.axvline(m["min_buffer_over_bdp"], color=f"C{i}", ls=":", lw=0.8)
    ax.set_xlabel("buffer b / BDP delta (dotted: b = delta (1 - beta) / beta)")
    ax.set_ylabel("link utilization (%)")
    ax.set_title("One NewReno flow, 10 Mb/s, RTT 100 ms")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def tcp_loss(quick: bool, workers: int) -> dict[str, Any]:
    """Goodput of NewReno bulk flows under random loss against Mathis and PFTK."""
    ps = (1e-3, 3e-3, 1e-2, 3e-2) if quick else (3e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1)
    seeds = (1,) if quick else SEEDS_FULL
    kw = {"duration_s": 200.0} if quick else {"duration_s": 600.0}
    jobs = [(simulate_random_loss, (p, seed), kw) for p in ps for seed in seeds]
    sims = run_many(jobs, workers)
    rtt, mss = 0.1, 1460
    for s in sims:
        s["mathis_Bps"] = tput.mathis(mss, rtt, s["loss_rate"])
        s["pftk_Bps"] = tput.pftk(mss, rtt, s["loss_rate"], 1.0)
    grid = np.logspace(-4, -1, 61)
    return {
        "rtt_s": rtt,
        "mss_bytes": mss,
        "model": {
            "p": grid.tolist(),
            "mathis_Bps": [tput.mathis(mss, rtt, p) for p in grid],
            "pftk_Bps": [tput.pftk(mss, rtt, p, 1.0) for p in grid],
        },
        "sim": sims,
    }


def plot_tcp(data: dict[str, Any], path: Path) -> None:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4.2))
    m = data["model"]
    ax.plot(m["p"], [8e-6 * x for x in m["mathis_Bps"]], label="Mathis (C = 0.87)")
    ax.plot(m["p"], [8e-6 * x for x in m["pftk_Bps"]], label="PFTK (T0 = 1 s)")
    ax.plot(
        [s["loss_rate"] for s in data["sim"]],
        [8e-6 * s["goodput_Bps"] for s in data["sim"]],
        "o",
        mfc="none",
        color="k",
        label="simulation (NewReno, mean of flows)",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("packet loss probability p")
    ax.set_ylabel("goodput per flow (Mb/s)")
    ax.set_title("TCP under random loss, RTT 100 ms")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


EXPERIMENTS: dict[str, tuple[Callable[[bool, int], dict[str, Any]], Callable[..., None]]] = {
    "queue-web": (lambda q, w: queue_tail("web", q, w), plot_queue_tail),
    "queue-general": (lambda q, w: queue_tail("general", q, w), plot_queue_tail),
    "flow-length": (flow_length, plot_flow_length),
    "buffer": (buffer_sizing, plot_buffer),
    "tcp": (tcp_loss, plot_tcp),
}


def run_experiments(
    out: Path,
    names: Sequence[str],
    *,
    quick: bool = False,
    workers: int = 2,
    log: Callable[[str], None] = print,
) -> list[Path]:
    """Run the named experiments; write ``NAME.json`` and ``NAME.png`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in names:
        compute, plot = EXPERIMENTS[name]
        log(f"running {name}{' (quick)' if quick else ''}...")
        data = compute(quick, workers)
        data["quick"] = quick
        (out / f"{name}.json").write_text(json.dumps(data, indent=1))
        plot(data, out / f"{name}.png")
        written += [out / f"{name}.json", out / f"{name}.png"]
    return written
