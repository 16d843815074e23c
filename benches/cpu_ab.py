"""Two builds of the `run_scenario` driver compared on the benchmark's scenarios by the CPU time
(user + system) of each run, runs of the two alternated, medians reported: a comparison that a
busy machine disturbs less than wall time does (docs/benchmarks.md, "Fewer instructions per
packet").

Run from the repository root:
    python benches/cpu_ab.py OLD_RUN_SCENARIO NEW_RUN_SCENARIO [--repeat 15]
where each binary is built by `cargo build --release -p ecnlab-benches --bin run_scenario`
(copy the old one aside before building the new)."""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from ecnlab import bench

CASES = {
    "dumbbell-10m N=15": ("dumbbell-10m", 15),
    "dumbbell-10m N=60": ("dumbbell-10m", 60),
    "dumbbell-10m N=240": ("dumbbell-10m", 240),
    "web-100m": ("web-100m", None),
}


def cpu_seconds(binary: str, scenario: Path) -> float:
    """User + system CPU time of one run of `binary` on `scenario`."""
    p = subprocess.Popen([binary, str(scenario)], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        raise SystemExit(f"{binary} {scenario}: exit status {status}")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--repeat", type=int, default=15, help="runs of each build per case")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for label, (name, n) in CASES.items():
            files[label] = Path(tmp) / f"{len(files)}.json"
            s = bench.scenario(name, n) if n is not None else bench.scenario(name)
            files[label].write_text(json.dumps(s))
        times = {(b, c): [] for b in (a.old, a.new) for c in CASES}
        for r in range(a.repeat):
            for c in CASES:
                for b in (a.old, a.new) if r % 2 == 0 else (a.new, a.old):
                    times[(b, c)].append(cpu_seconds(b, files[c]))
    for c in CASES:
        old, new = (statistics.median(times[(b, c)]) for b in (a.old, a.new))
        print(f"{c:20} CPU s old {old:.3f}  new {new:.3f}  new/old {new / old:.3f}")


if __name__ == "__main__":
    main()
