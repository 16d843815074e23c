"""Two builds compared on the benchmark's scenarios by the CPU time of the simulation, runs of
the two alternated, each pair of runs compared: a comparison that a busy or erratic machine
disturbs less than the wall time of `ecnlab bench` does (docs/benchmarks.md).

Run from the repository root:
    python benches/cpu_ab.py OLD NEW [--repeat 15] [--cases dumbbell-10m:15,web-100m]
where OLD and NEW are either
  * two `run_scenario` binaries (`cargo build --release -p ecnlab-benches --bin run_scenario`;
    copy the old one aside before building the new): the CPU time (user + system) of the whole
    process; or
  * two builds of the extension module (`python/ecnlab/_core.abi3.so` after
    `pip install -e .`, copied aside): each run is a fresh interpreter importing the package
    with that module (a copy of `python/ecnlab` per build in a temporary folder, first on
    PYTHONPATH), timed with `time.process_time()` around building, running and finishing the
    `_core.Simulation`, as `ecnlab bench` times wall. Only the extension is built with the PGO
    profile (docs/benchmarks.md, "Profile-guided optimization"), so compare PGO builds this way.

For each case it prints the medians and the median over pairs of NEW / OLD (a pair: the two
builds run back to back, in alternating order) with a 95% bootstrap interval, and in how many
pairs NEW was faster. An interval that contains 1 is no measured difference. Giving the same
build twice (an A/A comparison) shows how far the machine alone moves the ratio."""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from ecnlab import bench

DEFAULT_CASES = "dumbbell-10m:15,dumbbell-10m:60,dumbbell-10m:240,web-100m"

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "ecnlab"

# Run in a fresh interpreter with one build's package first on the path.
TIMED = """
import sys, time
from ecnlab import _core
config = open(sys.argv[1]).read()
start = time.process_time()
sim = _core.Simulation(config, 1)
sim.run_until(sim.end_ns)
sim.results()
print(time.process_time() - start)
"""


def cpu_seconds(build: str, scenario: Path, site: Path | None) -> float:
    """CPU seconds of one run of `scenario` with `build` (see the module's docstring)."""
    if site is None:
        p = subprocess.Popen([build, str(scenario)], stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        if status != 0:
            raise SystemExit(f"{build} {scenario}: exit status {status}")
        return usage.ru_utime + usage.ru_stime
    env = dict(os.environ, PYTHONPATH=str(site))
    out = subprocess.run(
        [sys.executable, "-c", TIMED, str(scenario)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=site,
    )
    if out.returncode != 0:
        raise SystemExit(f"{build} {scenario}: {out.stderr.strip()[-300:]}")
    return float(out.stdout.split()[-1])


def package_with(extension: str, folder: Path) -> Path:
    """A copy of the package with `extension` as its native module; returns its site folder."""
    site = folder / "site"
    shutil.copytree(PACKAGE, site / "ecnlab", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copyfile(extension, site / "ecnlab" / "_core.abi3.so")
    return site


def paired(old: list[float], new: list[float], rng: random.Random) -> tuple[float, float, float]:
    """Median of the pairs' NEW / OLD and its 95% bootstrap interval (2000 resamples)."""
    ratios = [n / o for o, n in zip(old, new)]
    boots = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    return statistics.median(ratios), boots[49], boots[1949]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--repeat", type=int, default=15, help="pairs of runs per case")
    ap.add_argument("--cases", default=DEFAULT_CASES, help="SCENARIO[:N],... of ecnlab.bench")
    a = ap.parse_args()
    extension = a.old.endswith(".so")
    if a.new.endswith(".so") != extension:
        raise SystemExit("compare two run_scenario binaries or two extension modules (.so)")
    builds = (a.old, a.new)  # by position, so that a build can be compared with itself
    with tempfile.TemporaryDirectory() as tmp:
        sites = [
            package_with(b, Path(tmp) / f"build{i}") if extension else None
            for i, b in enumerate(builds)
        ]
        files = {}
        for case in a.cases.split(","):
            name, _, n = case.partition(":")
            files[case] = Path(tmp) / f"case{len(files)}.json"
            files[case].write_text(json.dumps(bench.scenario(name, int(n) if n else None)))
        times: dict[tuple[int, str], list[float]] = {(i, c): [] for i in (0, 1) for c in files}
        for r in range(a.repeat):
            for c, file in files.items():
                for i in (0, 1) if r % 2 == 0 else (1, 0):
                    times[(i, c)].append(cpu_seconds(builds[i], file, sites[i]))
    rng = random.Random(1)
    for c in files:
        old, new = times[(0, c)], times[(1, c)]
        ratio, low, high = paired(old, new, rng)
        faster = sum(n < o for o, n in zip(old, new))
        print(
            f"{c:18} CPU s old {statistics.median(old):.3f}  new {statistics.median(new):.3f}  "
            f"new/old {ratio:.3f} (95%: {low:.3f}-{high:.3f}), new faster in {faster}/{len(old)}"
        )


if __name__ == "__main__":
    main()
