"""The testbed router's forwarding rate on this machine (docs/testbed.md): one bulk TCP flow
through ``ecnlab-router`` at configured rates of 10 Mb/s, 100 Mb/s, 1 Gb/s and 10 Gb/s (the
last two above what the router sustains, so they measure its ceiling). Needs root.

    sudo python benches/testbed_router.py [SECONDS]

Then, at 10 Mb/s, the same with the router under SCHED_FIFO (``rt_priority``) and busy-polling
(``busy_poll_us``), which only change the lateness.

Prints, per rate: receiver goodput, the router's IPv4 rate, what the link would give
(rate x 1448/1500), the mean and largest send lateness, and frames dropped.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ecnlab.testbed import Testbed

TOOL = str(Path(__file__).resolve().parents[1] / "tests" / "testbed_bulk.py")


def run(rate_bps: float, seconds: float, **router: int) -> dict:
    with Testbed(rate_bps=rate_bps, queue={"limit_pkts": 1000}, delay_ms=1.0, **router) as t:
        recv = t.popen("c0", [sys.executable, TOOL, "recv", "5001"], stdout=subprocess.PIPE, text=True)
        recv.stdout.readline()
        t.run("s0", [sys.executable, TOOL, "send", t.address("c0"), "5001", str(seconds)],
              timeout=seconds + 30)
        points = json.loads(recv.communicate(timeout=30)[0])["points"]
        samples = t.samples("down")
    final = t.final("down")
    a = next(p for p in points if p[0] >= 1.0)
    b = points[-1]
    s0 = next(s for s in samples if s["t_ns"] >= 1e9)
    s1 = [s for s in samples if s["t_ns"] <= b[0] * 1e9][-1]
    return {
        "rate_mbps": rate_bps / 1e6,
        "goodput_mbps": (b[1] - a[1]) * 8 / (b[0] - a[0]) / 1e6,
        "router_mbps": (s1["delivered_bytes"] - s0["delivered_bytes"]) * 8 / ((s1["t_ns"] - s0["t_ns"]) / 1e9) / 1e6,
        "ideal_goodput_mbps": rate_bps * 1448 / 1500 / 1e6,
        "lateness_mean_us": final["send_lateness_ns_sum"] / max(final["tx_frames"], 1) / 1e3,
        "lateness_max_us": final["send_lateness_ns_max"] / 1e3,
        "dropped": final["dropped"],
    }


if __name__ == "__main__":
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    runs = [(rate, {}) for rate in (10e6, 100e6, 1e9, 10e9)]
    runs += [(10e6, {"rt_priority": 50}), (10e6, {"busy_poll_us": 200}),
             (10e6, {"rt_priority": 50, "busy_poll_us": 200})]
    for rate, router in runs:
        r = run(rate, seconds, **router)
        print(f"{r['rate_mbps']:>8.0f} Mb/s {router}: goodput {r['goodput_mbps']:8.2f} (link ideal "
              f"{r['ideal_goodput_mbps']:8.2f}), router {r['router_mbps']:8.2f} Mb/s, lateness mean "
              f"{r['lateness_mean_us']:6.1f} us max {r['lateness_max_us']:8.1f} us, dropped {r['dropped']}",
              flush=True)
