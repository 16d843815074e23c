"""Makes the profile-guided optimization profile of the simulator crate,
crates/ecnlab/pgo/ecnlab.profdata (docs/benchmarks.md, "Profile-guided optimization").

Run from the repository root, with the package's dependencies installed:
    python benches/pgo.py
then rebuild (`python -m pip install .`) to build with the new profile. It needs the
`llvm-profdata` of the compiler's LLVM (`rustup component add llvm-tools`).

What it does:
1. builds the extension with instrumentation (`pip wheel` with `-Cprofile-generate`, in a
   target folder of its own) and puts it in a copy of the Python package in a temporary folder,
   so the installed package is not touched;
2. runs the training set with that copy, as a user would (`python -m ecnlab run`): the example
   scenarios of `examples/` (TOML, the testbed's left out), the adaptive-RED web scenario of
   `benches/`, and the RED and web dumbbells with the studies' other queue disciplines and
   TCPs (TRAINING). The benchmark's own cases are not in it, so `ecnlab bench` measures the
   profile on scenarios it was not made from;
3. merges the counts into the profile and records the LLVM major version that wrote it
   (crates/ecnlab/pgo/llvm-major: an older LLVM cannot read the profile, and the build then
   leaves it out: crates/ecnlab/pgo/rustc-wrapper).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PGO = ROOT / "crates" / "ecnlab" / "pgo"

AQM = "topology.bottleneck.queue.aqm"

# (scenario file, overrides): every simulation example, cut to at most 100 simulated seconds,
# then the RED dumbbell and the web dumbbell again with the other queue disciplines and TCPs
# that the studies run (20 s each), so that their code is in the profile too.
TRAINING: list[tuple[str, list[str]]] = [
    ("examples/red-dumbbell.toml", []),
    ("examples/dumbbell-bulk.toml", []),
    ("examples/heterogeneous-groups.toml", []),
    ("examples/mm1.toml", []),
    ("examples/parking-lot.toml", []),
    ("examples/tcp-mix.toml", ["duration_s=100"]),
    ("examples/web-dumbbell.toml", []),
    ("examples/web-sessions.toml", ["duration_s=100", "warmup_s=20"]),
    ("benches/ecn-plus-web-100s.json", []),
    *[
        (example, ["duration_s=20", "warmup_s=5", f"{AQM}={aqm}", *tcp])
        for example in ("examples/red-dumbbell.toml", "examples/web-dumbbell.toml")
        for aqm, tcp in [
            ('{kind="pie",ecn=true}', ["tcp.ecn=true"]),
            ('{kind="codel",ecn=true}', ["tcp.ecn=true", "tcp.congestion_control=cubic"]),
            ('{kind="pi",ecn=true}', ["tcp.ecn=true", "tcp.ecn_plus=seed"]),
            ('{kind="rem",ecn=true}', ["tcp.ecn=true"]),
            ('{kind="dcn"}', []),
            ('{kind="afd"}', []),
            ('{kind="rio_ps"}', []),
            ('{kind="threshold",k_pkts=20}', ["tcp.congestion_control=dctcp"]),
            ('{kind="dualpi2"}', ["tcp.congestion_control=prague"]),
            ('{kind="red",ecn=true}', ["tcp.profile=linux", "tcp.sack=true"]),
        ]
    ],
]


def llvm_tool(name: str, version: str) -> Path:
    """The LLVM tool `name` of the active Rust toolchain (rustup's llvm-tools component);
    `version` is what `rustc -vV` prints."""
    sysroot = run(["rustc", "--print", "sysroot"]).strip()
    host = re.search(r"^host: (\S+)$", version, re.MULTILINE)
    path = Path(sysroot) / "lib" / "rustlib" / (host.group(1) if host else "") / "bin" / name
    if not path.is_file():
        sys.exit(f"{path} not found: install it with `rustup component add llvm-tools`")
    return path


def llvm_major(version: str) -> str:
    found = re.search(r"^LLVM version: (\d+)", version, re.MULTILINE)
    if not found:
        sys.exit("`rustc -vV` names no LLVM version")
    return found.group(1)


def run(cmd: list[str], **kw) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def instrumented_package(work: Path) -> Path:
    """A copy of python/ecnlab whose extension counts what runs (into LLVM_PROFILE_FILE)."""
    env = dict(os.environ)
    # The build scripts, instrumented too, write their counts here when the build runs them.
    env["RUSTFLAGS"] = f"-Cprofile-generate={work / 'build-counts'}"
    env["CARGO_TARGET_DIR"] = str(work / "target")
    print("building the instrumented extension (a few minutes)", flush=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "wheel"),
         str(ROOT)],
        check=True, env=env,
    )
    (wheel,) = (work / "wheel").glob("ecnlab-*.whl")
    site = work / "site"
    with zipfile.ZipFile(wheel) as z:
        z.extractall(site)
    return site


def train(site: Path, raw: Path, work: Path) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(site)
    env["LLVM_PROFILE_FILE"] = str(raw / "ecnlab-%p-%m.profraw")
    for i, (name, overrides) in enumerate(TRAINING):
        path = ROOT / name
        if path.suffix == ".json":
            # `ecnlab run` reads TOML: write the scenario as TOML beside the runs.
            from ecnlab.bench import toml_text

            toml = work / f"{path.stem}.toml"
            toml.write_text(toml_text(json.loads(path.read_text())))
            path = toml
        cmd = [sys.executable, "-m", "ecnlab", "run", str(path), "-q", "--out",
               str(work / "runs" / str(i))]
        for o in overrides:
            cmd += ["-s", o]
        print(f"training: {name} {' '.join(overrides)}", flush=True)
        subprocess.run(cmd, check=True, env=env, cwd=work)


def main() -> int:
    version = run(["rustc", "-vV"])
    profdata = llvm_tool("llvm-profdata", version)
    with tempfile.TemporaryDirectory(prefix="ecnlab-pgo-") as tmp:
        work = Path(tmp)
        raw = work / "raw"
        raw.mkdir()
        site = instrumented_package(work)
        train(site, raw, work)
        out = PGO / "ecnlab.profdata"
        subprocess.run(
            [str(profdata), "merge", "--sparse", "-o", str(out), *map(str, raw.glob("*.profraw"))],
            check=True,
        )
    (PGO / "llvm-major").write_text(llvm_major(version) + "\n")
    print(f"wrote {out.relative_to(ROOT)} ({out.stat().st_size / 1e6:.2f} MB); "
          "rebuild with `python -m pip install .` to use it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
