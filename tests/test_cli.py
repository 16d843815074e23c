"""The ecnlab command line, on real runs of the examples."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import duckdb
import ecnlab
import pandas as pd
import pytest
from conftest import (
    EXAMPLES,
    assert_one_line_error,
    ecnlab_process,
    invoke,
    wait_for_cpu_seconds,
)

BULK = str(EXAMPLES / "dumbbell-bulk.toml")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "bulk"
    result = invoke("run", BULK, "--out", str(out), "--set", "duration_s=5", "--seed", "3")
    assert result.exit_code == 0, result.output
    # The one-screen summary.
    for label in ("simulated time", "wall time", "events", "utilization", "goodput"):
        assert label in result.stdout
    assert "written to" in result.stdout
    return out


def test_run_writes_parquet_readable_by_duckdb_and_pandas(run_dir: Path) -> None:
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["seed"] == 3
    assert manifest["ecnlab_version"] == ecnlab.__version__
    assert manifest["scenario"]["duration_s"] == 5
    assert manifest["scenario"]["name"] == "dumbbell-bulk"
    con = duckdb.connect()
    for name in ecnlab.TABLES:
        path = run_dir / f"{name}.parquet"
        rows = manifest["tables"][name]["rows"]
        assert con.execute("select count(*) from read_parquet(?)", [str(path)]).fetchone() == (
            rows,
        )
        assert len(pd.read_parquet(path)) == rows
    flows = con.execute(
        "select count(*), sum(goodput_bytes) from read_parquet(?)", [str(run_dir / "flows.parquet")]
    ).fetchone()
    assert flows is not None
    assert flows[0] == 10
    assert flows[1] > 0


def test_run_again_without_force_fails_and_keeps_results(run_dir: Path) -> None:
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    result = invoke("run", BULK, "--out", str(run_dir), "--set", "duration_s=1")
    assert_one_line_error(result, "already holds a run", "--force")
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before


def test_run_with_force_replaces(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", BULK, "--out", str(out), "--set", "duration_s=1", "--set", "warmup_s=0"]
    assert invoke(*args, "--quiet").exit_code == 0
    result = invoke(*args, "--quiet", "--force", "--seed", "9")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert json.loads((out / "manifest.json").read_text())["seed"] == 9


def test_run_errors_are_one_red_line(tmp_path: Path) -> None:
    out = str(tmp_path / "run")
    assert_one_line_error(invoke("run", "nosuch.toml", "--out", out), "nosuch.toml")
    assert_one_line_error(
        invoke("run", BULK, "--out", out, "--set", "topology.bottleneck.rate_bps=-5"),
        "topology.bottleneck.rate_bps",
        "dumbbell-bulk.toml",
    )
    assert_one_line_error(
        invoke("run", BULK, "--out", out, "--set", "topology.bottleneck.nosuch=1"), "nosuch"
    )
    assert_one_line_error(invoke("run", BULK, "--out", out, "--set", "oops"), "oops")
    assert not Path(out).exists()


def test_schema_prints_json() -> None:
    result = invoke("schema")
    assert result.exit_code == 0
    assert isinstance(json.loads(result.stdout), dict)


def test_validate() -> None:
    result = invoke("validate", BULK, "--set", "workloads.0.flows=3")
    assert result.exit_code == 0, result.output
    normalized = json.loads(result.stdout)
    assert normalized["workloads"][0]["flows"] == 3
    assert normalized["metrics"]["interval_s"] == 1
    assert_one_line_error(
        invoke("validate", BULK, "--set", "topology.bottleneck.queue.aqm.kind=nosuch"), "nosuch"
    )


def test_version() -> None:
    result = invoke("--version")
    assert result.exit_code == 0
    assert ecnlab.__version__ in result.stdout


def test_python_dash_m_and_ctrl_c(tmp_path: Path) -> None:
    """A real process: ``python -m ecnlab``, interrupted mid-run, writes nothing."""
    out = tmp_path / "run"
    web = str(EXAMPLES / "web-dumbbell.toml")
    proc = ecnlab_process("run", web, "--out", str(out), "--quiet", "--set", "duration_s=3600")
    wait_for_cpu_seconds(proc, 3.0)  # imports done (about 1 s of CPU), simulation under way
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr
    assert "Traceback" not in stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_run_writes_under_results_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As reproduce, plot and report do, run defaults its folder: results/SCENARIO.
    monkeypatch.chdir(tmp_path)
    result = invoke("run", BULK, "--set", "duration_s=1", "--set", "warmup_s=0", "--quiet")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "results" / "dumbbell-bulk" / "manifest.json").is_file()
