"""ecnlab's BPF congestion controls for the testbed: DCTCP and ABE NewReno in the real kernel.

A kernel without the ``tcp_dctcp`` module, or any Linux for ABE (RFC 8511 is not in Linux),
gets them as BPF struct_ops programs (``python/ecnlab/bpf/``): compiled with ``clang -target
bpf`` against a ``vmlinux.h`` dumped from the running kernel's BTF, registered with
``bpftool struct_ops register`` (the kernel then lists the name in
``net.ipv4.tcp_available_congestion_control`` for every namespace) and unregistered by map id.

A program is described by a small JSON-able dict, ``{"name", "source", "defines"}``: its
parameters are compiled in (``-DBETA_ECN_PERMILLE=850``), so each set of parameters is its own
congestion control, named after them. Runs that use the same name at once share one
registration: a state file per name (``$ECNLAB_TESTBED_STATE/bpf/NAME.json``, default
``/run/ecnlab-testbed``) holds the map id and the holders (a testbed's namespace prefix, whose
pid says whether it is alive), under an exclusive ``flock``; the last holder to release it,
or ``ecnlab testbed down --all`` once every holder is dead, unregisters it. A name that is
registered without a state file (someone else's) is used and left alone.
See docs/testbed.md, "BPF congestion controls".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

SOURCE_DIR = Path(__file__).with_name("bpf")
BTF = Path("/sys/kernel/btf/vmlinux")
AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
LIBBPF_HEADER = Path("/usr/include/bpf/bpf_helpers.h")
INSTALL = "apt-get install -y clang bpftool libbpf-dev"
NAME_MAX = 15  # TCP_CA_NAME_MAX less the NUL
ALPHA_UNITS = 1 << 20  # the DCTCP program's alpha is in units of 2^-20
G_SHIFT_MAX = 16

__all__ = ["abe_program", "acquire", "build", "dctcp_program", "missing_tools", "release",
           "release_orphans"]


class BpfError(RuntimeError):
    """A BPF congestion control could not be built, registered or unregistered."""


def dctcp_program(g: float = 1 / 16, alpha_init: float = 1.0) -> dict[str, Any] | str:
    """The DCTCP program for gain ``g`` and initial alpha, or why it cannot be built.

    ``g`` must be 1/2^k (the program divides by a shift), k from 1 to 16; ``alpha_init`` is
    rounded to 2^-20."""
    shift = round(-math.log2(g)) if g > 0 else 0
    if not 1 <= shift <= G_SHIFT_MAX or abs(g - 2.0 ** -shift) > 1e-12:
        return (f"the BPF DCTCP's gain is a shift: 1/2^k for k from 1 to {G_SHIFT_MAX} "
                "(1/16 is RFC 8257's and Linux's)")
    alpha = round(alpha_init * ALPHA_UNITS)
    defines = {"G_SHIFT": shift, "ALPHA_INIT": alpha}
    name = "ecnlab_dctcp" if defines == {"G_SHIFT": 4, "ALPHA_INIT": ALPHA_UNITS} \
        else "ecnlab_dc_" + _digest(defines, 5)
    return {"name": name, "source": "ecnlab_dctcp.bpf.c", "defines": defines}


def abe_program(beta_ecn: float = 0.8) -> dict[str, Any] | str:
    """The ABE NewReno program for ``beta_ecn``, or why it cannot be built (a whole number
    of thousandths in (0, 1] is compiled in)."""
    permille = round(beta_ecn * 1000)
    if not 0 < permille <= 1000 or abs(beta_ecn * 1000 - permille) > 1e-6:
        return ("the BPF ABE's beta_ecn is a whole number of thousandths in (0, 1] "
                "(compiled in as BETA_ECN_PERMILLE)")
    name = "ecnlab_abe" if permille == 800 else f"ecnlab_abe_{permille}"
    return {"name": name, "source": "ecnlab_abe.bpf.c",
            "defines": {"BETA_ECN_PERMILLE": permille}}


def missing_tools() -> list[str]:
    """What building needs and this machine lacks (``INSTALL`` installs it on Debian)."""
    out = [t for t in ("clang", "bpftool") if shutil.which(t) is None]
    if not LIBBPF_HEADER.is_file():
        out.append(f"libbpf's headers ({LIBBPF_HEADER})")
    if not BTF.is_file():
        out.append(f"the kernel's BTF ({BTF})")
    return out


def available() -> set[str]:
    """The kernel's registered congestion controls."""
    try:
        return set(AVAILABLE.read_text().split())
    except OSError:
        return set()


def build(program: Mapping[str, Any], build_dir: Path) -> Path:
    """Compiles ``program`` into ``build_dir`` (with a ``vmlinux.h`` of the running kernel);
    returns the object file."""
    missing = missing_tools()
    if missing:
        raise BpfError(f"building BPF congestion controls needs {', '.join(missing)} "
                       f"(Debian: {INSTALL})")
    name = program["name"]
    if not re.fullmatch(rf"[a-z0-9_]{{1,{NAME_MAX}}}", name):
        raise BpfError(f"{name!r}: a congestion control's name has 1 to {NAME_MAX} "
                       "characters [a-z0-9_]")
    header = build_dir / "vmlinux.h"
    if not header.exists():
        with open(header, "w") as f:
            _run(["bpftool", "btf", "dump", "file", str(BTF), "format", "c"], stdout=f)
    obj = build_dir / f"{name}.bpf.o"
    _run(["clang", "-O2", "-g", "-target", "bpf", "-I", str(build_dir), "-I", str(SOURCE_DIR),
          f'-DCA_NAME="{name}"', *(f"-D{k}={v}" for k, v in program["defines"].items()),
          "-c", str(SOURCE_DIR / program["source"]), "-o", str(obj)])
    return obj


def register(obj: Path) -> int:
    """Registers a built program; returns its struct_ops map id."""
    r = _run(["bpftool", "struct_ops", "register", str(obj)])
    out = r.stdout + r.stderr  # bpftool 7.1 writes the line to stderr
    m = re.search(r"Registered \S+ \S+ id (\d+)", out)
    if m is None:
        raise BpfError(f"bpftool struct_ops register {obj}: no map id in {out.strip()!r}")
    return int(m.group(1))


def unregister(map_id: int) -> None:
    _run(["bpftool", "struct_ops", "unregister", "id", str(map_id)])


def acquire(program: Mapping[str, Any], holder: str) -> bool:
    """Makes ``program`` registered, held by ``holder`` (a testbed's namespace prefix,
    ``ecnlab-<pid>-``); builds and registers it if no one has. False when the name is
    registered by someone else than ecnlab (used, not held)."""
    name = program["name"]
    with _locked() as state:
        path = state / f"{name}.json"
        info = _read(path)
        if name in available():
            if info is None:
                return False
        else:
            with tempfile.TemporaryDirectory(prefix="ecnlab-bpf-") as tmp:
                info = {"id": register(build(program, Path(tmp))), "program": dict(program),
                        "holders": []}
        assert info is not None
        info["holders"] = [h for h in info["holders"] if _alive_holder(h)] + [holder]
        path.write_text(json.dumps(info))
        return True


def release(name: str, holder: str) -> None:
    """Drops ``holder``'s hold on ``name``; unregisters it when no live holder is left."""
    with _locked() as state:
        _release(state / f"{name}.json", holder)


def release_orphans() -> list[str]:
    """Unregisters every program whose holders are all gone; returns their names."""
    out = []
    with _locked() as state:
        for path in sorted(state.glob("*.json")):
            if _release(path, None):
                out.append(path.stem)
    return out


def _release(path: Path, holder: str | None) -> bool:
    info = _read(path)
    if info is None:
        return False
    info["holders"] = [h for h in info["holders"] if h != holder and _alive_holder(h)]
    if info["holders"]:
        path.write_text(json.dumps(info))
        return False
    if path.stem in available():
        unregister(info["id"])
    path.unlink()
    return True


def state_dir() -> Path:
    return Path(os.environ.get("ECNLAB_TESTBED_STATE", "/run/ecnlab-testbed")) / "bpf"


@contextlib.contextmanager
def _locked() -> Iterator[Path]:
    import fcntl  # POSIX only: imported when a testbed runs, not with the planner

    state = state_dir()
    state.mkdir(parents=True, exist_ok=True)
    with open(state / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield state


def _read(path: Path) -> dict[str, Any] | None:
    try:
        info: dict[str, Any] = json.loads(path.read_text())
        return info
    except (OSError, ValueError):
        return None


def _alive_holder(holder: str) -> bool:
    """A holder ``ecnlab-<pid>-`` or ``ecnlab-<pid>.<n>-`` is alive while its pid is."""
    pid = holder.split("-")[1].split(".")[0] if holder.count("-") >= 2 else ""
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    kwargs.setdefault("stdout", subprocess.PIPE)
    r = subprocess.run(argv, stderr=subprocess.PIPE, text=True, check=False, **kwargs)
    if r.returncode != 0:
        raise BpfError(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()[-2000:]}")
    return r


def _digest(defines: Mapping[str, Any], n: int) -> str:
    return hashlib.sha1(json.dumps(dict(defines), sort_keys=True).encode()).hexdigest()[:n]
