"""AECN against RED with ECN in seed 001's heterogeneous scenario (docs/models/aecn.md).

Three equal groups of long-lived flows with propagation RTTs of 300, 100 and 20 ms share a
10 Mb/s bottleneck (50-packet queue, min_th 5, max_th 30, max_p 0.1); 1000-byte packets,
windows capped at 30 packets, access links sharing 600 Mb/s; 100 s with 20 s of warm-up.
Prints goodput per group, Jain's index and lock-outs, and draws docs/models/figures/aecn.png.

Run: python examples/aecn_comparison.py [--out PATH]
"""

from __future__ import annotations

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import ecnlab  # noqa: E402

RTTS_MS = (300, 100, 20)
RED = {"ecn": True, "min_th_pkts": 5, "max_th_pkts": 30, "max_p": 0.1, "gentle": False}
SCHEMES = {
    "RED+ECN": {"kind": "red", **RED},
    "AECN": {"kind": "aecn", "red": RED, "n_ref_flows": 30},
}


def scenario(n: int, aqm: dict) -> dict:
    return {
        "duration_s": 100,
        "warmup_s": 20,
        "topology": {
            "clients": n,
            "servers": n,
            "access_rate_bps": 600e6 / n,
            "access_delay_ms": 0,
            "bottleneck": {"rate_bps": 10e6, "delay_ms": 5, "queue": {"limit_pkts": 50, "aqm": aqm}},
        },
        "tcp": {"mss_bytes": 960, "ecn": True},
        "workloads": [
            {
                "kind": "bulk",
                "flows": n // 3,
                "start_jitter_s": 2,
                "rtt_ms": {"dist": "constant", "value": rtt},
                "rwnd_bytes": {"dist": "constant", "value": 30 * 960},
            }
            for rtt in RTTS_MS
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/models/figures/aecn.png")
    args = parser.parse_args()
    counts = (15, 30, 60, 120)
    rows = []
    for n in counts:
        for name, aqm in SCHEMES.items():
            r = ecnlab.run(scenario(n, aqm), seed=1, progress=False)
            f = r.flows.to_pandas()
            window_s = r.summary["window_s"]
            kbps = (f.groupby("rtt_ms").goodput_bytes.mean() * 8 / window_s / 1e3).to_dict()
            x = f.goodput_bytes.astype(float)
            jain = x.sum() ** 2 / (len(x) * (x**2).sum())
            rows.append((n, name, kbps, jain, int((x == 0).sum()), r.summary["mark_rate_down"]))
    print("| flows | scheme | 300 ms kb/s | 100 ms kb/s | 20 ms kb/s | Jain | lock-outs | mark rate |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for n, name, kbps, jain, locked, marks in rows:
        g = [kbps[float(rtt)] for rtt in RTTS_MS]
        print(f"| {n} | {name} | {g[0]:.0f} | {g[1]:.0f} | {g[2]:.0f} | {jain:.3f} | {locked} | {marks:.3f} |")
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for name, style in zip(SCHEMES, ("o-", "s--")):
        mine = [row for row in rows if row[1] == name]
        for rtt, color in zip(RTTS_MS, ("tab:red", "tab:blue", "tab:green")):
            left.plot(counts, [row[2][float(rtt)] for row in mine], style, color=color, label=f"{name}, {rtt} ms")
        right.plot(counts, [row[3] for row in mine], style, color="black", label=name)
    left.set(xlabel="number of flows", ylabel="mean goodput per flow (kb/s)", xscale="log", yscale="log")
    right.set(xlabel="number of flows", ylabel="Jain's fairness index", xscale="log", ylim=(0, 1.05))
    for ax in (left, right):
        ax.set_xticks(counts, [str(n) for n in counts])
        ax.minorticks_off()
    left.legend(fontsize=7)
    right.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(args.out)


if __name__ == "__main__":
    main()
