"""Two builds' Parquet writers compared on one run's tables: file sizes, and the time to write
and sync every table, the two builds alternated in one process (docs/benchmarks.md, "Smaller
tables").

Run from the repository root:
    python benches/parquet_ab.py OLD.so NEW.so SCENARIO.json [--duration-s S] [--repeat 11]
where OLD.so and NEW.so are copies of `python/ecnlab/_core.abi3.so` from two builds. The run is
made once by the installed package (`--duration-s` shortens it, its warm-up a quarter of it);
each build then writes its tables `--repeat` times into a temporary folder on the disk of the
current directory, `fsync`ed as `ecnlab.store.write_run` does."""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import ecnlab
from ecnlab.store import _fsync_file


def load(path: str, name: str) -> ModuleType:
    """The extension module at ``path``, under a package name of its own."""
    spec = importlib.util.spec_from_file_location(f"{name}._core", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_all(core: ModuleType, native: dict[str, Any], folder: Path) -> dict[str, int]:
    """Every table written and synced; its size in bytes by name."""
    sizes = {}
    for name, columns in native.items():
        path = folder / f"{name}.parquet"
        core.write_parquet(str(path), dict(columns))
        _fsync_file(path)
        sizes[name] = path.stat().st_size
    return sizes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--duration-s", type=float, default=None)
    ap.add_argument("--repeat", type=int, default=11)
    args = ap.parse_args()
    builds = {"old": load(args.old, "old"), "new": load(args.new, "new")}
    scenario = json.loads(args.scenario.read_text())
    if args.duration_s is not None:
        scenario["duration_s"] = args.duration_s
        scenario["warmup_s"] = args.duration_s / 4
    native = ecnlab.run(scenario, progress=False).native_tables()
    seconds: dict[str, list[float]] = {"old": [], "new": []}
    sizes: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory(dir=".") as tmp:
        for i in range(args.repeat):
            for label in ("old", "new") if i % 2 == 0 else ("new", "old"):
                folder = Path(tmp) / label
                folder.mkdir(exist_ok=True)
                start = time.perf_counter()
                sizes[label] = write_all(builds[label], native, folder)
                seconds[label].append(time.perf_counter() - start)
    for label in ("old", "new"):
        total = sum(sizes[label].values())
        print(f"{label}: {total / 1e6:.2f} MB, write and sync median {statistics.median(seconds[label]) * 1e3:.1f} ms")
    pairs = [n / o for n, o in zip(seconds["new"], seconds["old"])]
    print(f"new / old time: median over pairs {statistics.median(pairs):.3f}")
    for name in native:
        print(f"  {name:14s} {sizes['old'][name] / 1e6:9.2f} -> {sizes['new'][name] / 1e6:9.2f} MB")


if __name__ == "__main__":
    main()
