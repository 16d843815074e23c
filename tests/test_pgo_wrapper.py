"""The build's rustc wrapper (crates/ecnlab/pgo/rustc-wrapper) passes the optimization profile
to the simulator crate only, only at opt-level 3, and only when the compiler can read it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WRAPPER = ROOT / "crates" / "ecnlab" / "pgo" / "rustc-wrapper"
PROFILE_LLVM = int((ROOT / "crates" / "ecnlab" / "pgo" / "llvm-major").read_text())

RELEASE = ["--crate-name", "ecnlab", "--edition=2021", "src/lib.rs", "-C", "opt-level=3"]


@pytest.fixture
def fake_rustc(tmp_path: Path):
    """A stand-in for rustc that prints its arguments, and `rustc -vV` with an LLVM major of
    the caller's choosing."""

    def make(llvm_major: int) -> Path:
        path = tmp_path / f"rustc-llvm{llvm_major}"
        path.write_text(
            "#!/bin/sh\n"
            'if [ "$1" = -vV ]; then\n'
            f"  printf 'rustc 1.0.0\\nLLVM version: {llvm_major}.1.0\\n'\n"
            "else\n"
            '  printf "%s\\n" "$@"\n'
            "fi\n"
        )
        path.chmod(0o755)
        return path

    return make


def compile_args(rustc: Path, args: list[str], **env: str) -> list[str]:
    unset = ("RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "ECNLAB_PGO")
    environ = {k: v for k, v in os.environ.items() if k not in unset}
    environ.update(env)
    out = subprocess.run(
        [str(WRAPPER), str(rustc), *args], capture_output=True, text=True, check=True, env=environ
    )
    return out.stdout.splitlines()


def uses_profile(args: list[str]) -> bool:
    profile = [a for a in args if a.startswith("-Cprofile-use=")]
    if profile:
        assert Path(profile[0].split("=", 1)[1]).is_file()
        assert "ecnlab_pgo" in args
    return bool(profile)


def test_the_simulator_crate_gets_the_profile_at_opt_level_3(fake_rustc):
    args = compile_args(fake_rustc(PROFILE_LLVM), RELEASE)
    assert uses_profile(args)
    assert args[: len(RELEASE)] == RELEASE


def test_other_crates_and_unoptimized_builds_do_not(fake_rustc):
    rustc = fake_rustc(PROFILE_LLVM)
    other = ["--crate-name", "ecnlab_testbed", "-C", "opt-level=3"]
    assert compile_args(rustc, other) == other
    debug = ["--crate-name", "ecnlab", "-C", "opt-level=0"]
    assert compile_args(rustc, debug) == debug


def test_switched_off_or_while_making_a_profile(fake_rustc):
    rustc = fake_rustc(PROFILE_LLVM)
    assert compile_args(rustc, RELEASE, ECNLAB_PGO="0") == RELEASE
    assert compile_args(rustc, RELEASE, RUSTFLAGS="-Cprofile-generate=/tmp/x") == RELEASE
    assert compile_args(rustc, [*RELEASE, "-Cprofile-generate=/tmp/x"]) == [
        *RELEASE, "-Cprofile-generate=/tmp/x"
    ]


def test_an_older_llvm_than_the_profiles_builds_without_it(fake_rustc):
    assert compile_args(fake_rustc(PROFILE_LLVM - 1), RELEASE) == RELEASE
    assert uses_profile(compile_args(fake_rustc(PROFILE_LLVM + 1), RELEASE))
