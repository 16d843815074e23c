"""The pre-run estimate (memory, events) against the measured peak resident memory above a
trivial run's, and the events, for the example scenarios and two large bulk workloads.
Run from the repository root: python benches/estimates.py (docs/scenario.md, "Memory budget")."""

import json
import subprocess
import sys
from pathlib import Path

from ecnlab import _core, load_scenario

CHILD = """
import json, resource, sys, ecnlab
s = json.loads(sys.argv[1])
r = ecnlab.run(s, 1, progress=False)
print(json.dumps([resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, r.summary["events"]]))
"""
TRIVIAL = {
    "duration_s": 0.01,
    "topology": {"bottleneck": {"rate_bps": 1e7}},
    "workloads": [{"kind": "bulk", "flows": 1}],
}


def child(s):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(s)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


base_kb, _ = child(TRIVIAL)
print(
    "| scenario | estimated memory | measured peak above a trivial run | estimated events | events |"
)
print("|---|---|---|---|---|")
cases = [(f.name, load_scenario(f)) for f in sorted(Path("examples").glob("*.toml"))]
for n in (100_000, 400_000):
    bulk = {
        "duration_s": 1.0,
        "topology": {"clients": 1000, "servers": 1000, "bottleneck": {"rate_bps": 1e8}},
        "workloads": [{"kind": "bulk", "flows": n, "start_jitter_s": 1}],
    }
    cases.append((f"{n} bulk flows, 1 s", bulk))
for name, s in cases:
    e = _core.estimate(json.dumps(s))
    kb, events = child(s)
    print(
        f"| {name} | {e['memory_bytes'] / 1e6:.0f} MB | {(kb - base_kb) / 1e3:.0f} MB | {e['events']:.2g} | {events:.2g} |"
    )
