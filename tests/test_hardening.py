"""Issue 19's fifteen findings, each reproduced as reported and answered by a clean one-line
error naming the field, the value and the rule, or by correct behaviour."""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import ecnlab
import numpy as np
import pytest
from conftest import (
    EXAMPLES,
    ROOT,
    assert_one_line_error,
    assert_tables_identical,
    ecnlab_process,
    invoke,
    wait_for_cpu_seconds,
)
from ecnlab import _core, store
from ecnlab import sweep as sweep_mod

BULK = str(EXAMPLES / "dumbbell-bulk.toml")
WEB_SESSIONS = str(EXAMPLES / "web-sessions.toml")

# Two buffers x two seeds of one second.
SMALL_SWEEP = f"""
name = "small"
base = "{Path(BULK).as_posix()}"
seeds = [1, 2]

[set]
duration_s = 1
warmup_s = 0.2
"metrics.interval_s" = 0.5
"workloads.0.flows" = 2

[[axes]]
name = "buffer"
path = "topology.bottleneck.queue.limit_pkts"
values = [20, 60]
labels = ["small", "large"]
"""


def _sweep(tmp_path: Path, text: str = SMALL_SWEEP, name: str = "sweep.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _python(code: str, *, limits: Any = None, cwd: Path | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limits,  # noqa: PLW1509 - a fresh interpreter, no threads yet
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"},
    )


# --- 1. panics in the core -----------------------------------------------------------------


def test_01_zero_mss_and_rates_that_round_to_zero_are_refused(tmp_path: Path) -> None:
    result = invoke("validate", BULK, "--set", "tcp.mss_bytes=0")
    assert_one_line_error(result, "tcp.mss_bytes (0) must be positive")
    out = str(tmp_path / "x")
    for field, value in (
        ("topology.bottleneck.rate_bps", "1e-3"),
        ("topology.access_rate_bps", "1e-300"),
    ):
        result = invoke(
            "run", BULK, "--out", out, "--set", "duration_s=2", "--set", "warmup_s=0",
            "--set", f"{field}={value}",
        )  # fmt: skip
        assert_one_line_error(result, f"{field} (", "must be at least 1000 bit/s")
    assert not Path(out).exists()


# --- 2. NaN and infinity -------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_02_nan_and_infinity_name_the_field(value: str) -> None:
    result = invoke("validate", BULK, "--set", f"topology.bottleneck.rate_bps={value}")
    assert_one_line_error(result, "topology.bottleneck.rate_bps (", "must be a finite number")
    assert "JSON" not in result.stderr
    scenario = ecnlab.load_scenario(BULK)
    scenario["workloads"][0]["rtt_ms"] = {"dist": "uniform", "low": 20, "high": float(value)}
    with pytest.raises(ValueError, match=r"^workloads\[0\]\.rtt_ms\.high \(.*must be a finite"):
        ecnlab.run(scenario, progress=False)


# --- 3. type errors inside workloads and distributions -------------------------------------


@pytest.mark.parametrize(
    ("override", "where"),
    [
        ("workloads.0.flows=10.0", "workloads[0].flows: invalid type: floating point `10.0`"),
        ('workloads.0.rtt_ms={dist="uniform", low=20, high="x"}', "workloads[0].rtt_ms.high:"),
        ('workloads.0.rtt_ms={dist="normal", mean=5}', "workloads[0].rtt_ms.dist: unknown"),
        ('workloads.0.rtt_ms={dist="uniform", low=20}', "workloads[0].rtt_ms: missing field"),
        (
            'workloads.0.rwnd_bytes={dist="mixture", weights=[1], parts=[{dist="constant", v=1}]}',
            "workloads[0].rwnd_bytes.parts[0].v: unknown field",
        ),
        ("workloads.0.tcp={ecn=1}", "workloads[0].tcp.ecn: invalid type"),
    ],
)
def test_03_type_errors_inside_a_workload_name_the_field(override: str, where: str) -> None:
    assert_one_line_error(invoke("validate", BULK, "--set", override), where)


# --- 4. upper bounds and the memory budget ---------------------------------------------------


@pytest.mark.parametrize(
    ("source", "override", "named"),
    [
        (BULK, "duration_s=1e300", "duration_s (1e300) must be at most 1e6 s"),
        (
            BULK,
            (
                'workloads.0={kind="exchanges", arrival_rate_per_s=1e300, '
                'response_bytes={dist="constant", value=1000}}'
            ),
            "workloads[0].arrival_rate_per_s (1e300) must be at most 1e6 1/s",
        ),
        (WEB_SESSIONS, "load.offered_load_mbps=1e300", "load.offered_load_mbps (1e+300) must be"),
    ],
)
def test_04_huge_values_are_refused(source: str, override: str, named: str) -> None:
    assert_one_line_error(invoke("validate", source, "--set", override), named)


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ("metrics.interval_s=1e-9", "metrics.interval_s"),
        ("metrics.queue_sample_ms=1e-6", "metrics.queue_sample_ms"),
    ],
)
def test_04_runs_over_the_memory_budget_are_refused_naming_the_field(
    tmp_path: Path, override: str, field: str
) -> None:
    # Default budget: the machine's available memory; 1 ns samples of a 30 s run need far more.
    result = invoke("run", BULK, "--out", str(tmp_path / "x"), "--set", override)
    assert_one_line_error(result, f"{field} (", "over the memory budget of", "events")
    assert not (tmp_path / "x").exists()


def test_04_the_documented_maximum_of_flows_is_checked_against_a_budget(tmp_path: Path) -> None:
    args = ["--set", "workloads.0.flows=10000000", "--memory-budget", "1GB"]
    result = invoke("run", BULK, "--out", str(tmp_path / "x"), *args)
    assert_one_line_error(
        result, "workloads[0].flows (10000000)", "over the memory budget of 1.0 GB"
    )
    # The estimate grows with the field that drives it, and a large enough budget accepts.
    small = json.dumps(ecnlab.load_scenario(BULK, ["workloads.0.flows=1000"]))
    big = json.dumps(ecnlab.load_scenario(BULK, ["workloads.0.flows=10000000"]))
    assert _core.estimate(big)["memory_bytes"] > 100 * _core.estimate(small)["memory_bytes"]
    _core.check_budget(big, 1e12)
    assert_one_line_error(invoke("validate", BULK, "--memory-budget", "lots"), "memory budget")


def test_04_ctrl_c_interrupts_a_dense_run_promptly(tmp_path: Path) -> None:
    """A million packets per millisecond: each core call still returns after 1e6 events."""
    out = tmp_path / "dense"
    scenario = tmp_path / "dense.toml"
    scenario.write_text(
        "duration_s = 100000\n[metrics]\nqueue_sample_ms = 0\n"
        "[topology.bottleneck]\nrate_bps = 1e12\n"
        '[[workloads]]\nkind = "packet_source"\nrate_pps = 1e9\n'
    )
    proc = ecnlab_process("run", str(scenario), "--out", str(out), "--quiet")
    wait_for_cpu_seconds(proc, 3.0)  # imports done (about 1 s of CPU), simulation under way
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert not out.exists()


def test_04_stopping_every_few_events_gives_identical_results(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ecnlab import _run

    scenario = ecnlab.load_scenario(
        EXAMPLES / "web-dumbbell.toml", ["duration_s=2", "warmup_s=0.5"]
    )
    whole = ecnlab.run(scenario, 1, progress=False)
    monkeypatch.setattr(_run, "MAX_EVENTS_PER_CALL", 997)
    pieces = ecnlab.run(scenario, 1, progress=False)
    assert pieces.summary["events"] == whole.summary["events"]
    assert_tables_identical(pieces.tables, whole.tables)


# --- 5. sweep sizes --------------------------------------------------------------------------


def test_05_a_billion_seeds_is_refused(tmp_path: Path) -> None:
    path = _sweep(tmp_path, SMALL_SWEEP.replace("seeds = [1, 2]", "seeds = 1000000000"))
    result = invoke("sweep", str(path), "--out", str(tmp_path / "out"))
    assert_one_line_error(result, "seeds (1000000000) must be at most 100000")


def test_05_a_billion_runs_is_refused_before_expanding_even_in_a_dry_run(tmp_path: Path) -> None:
    axes = "".join(
        f'\n[[axes]]\nname = "a{i}"\npath = "name"\nvalues = {list(range(1000))}\n'
        for i in range(3)
    )
    path = _sweep(tmp_path, SMALL_SWEEP.split("[[axes]]")[0] + axes)
    for extra in ([], ["--dry-run"]):
        result = invoke("sweep", str(path), "--out", str(tmp_path / "out"), *extra)
        assert_one_line_error(
            result, "a0 (1000) x a1 (1000) x a2 (1000) x seeds (2) is 2000000000 runs"
        )
    assert not (tmp_path / "out").exists()


# --- 6. wrong values recorded silently ------------------------------------------------------


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ('workloads.0.rtt_ms={dist="constant", value=1e300}', "workloads[0].rtt_ms.value (1e300)"),
        ('workloads.0.rwnd_bytes={dist="constant", value=1e20}', "workloads[0].rwnd_bytes.value"),
        ("workloads.0.bytes=9000000000000000000", "workloads[0].bytes (9e18)"),
        ("topology.bottleneck.queue.limit_bytes=18000000000000000000", "limit_bytes"),
        ("tcp.min_rto_s=1e300", "tcp.min_rto_s (1e300) must be at most 1e6 s"),
    ],
)
def test_06_huge_values_are_refused_not_saturated(override: str, named: str) -> None:
    result = invoke("validate", BULK, "--set", override)
    assert_one_line_error(result, named)
    assert "18446744073" not in result.stderr  # no saturated nanosecond count in the message


def test_06_a_large_valid_rtt_is_recorded_as_given(tmp_path: Path) -> None:
    scenario = ecnlab.load_scenario(
        BULK,
        ["duration_s=1", "warmup_s=0", 'workloads.0.rtt_ms={dist="constant", value=4000}'],
    )
    flows = ecnlab.run(scenario, progress=False).tables["flows"].to_pydict()
    assert set(flows["rtt_ms"]) == {4000.0}


# --- 7. nonsense combinations -------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        (['tcp.ecn_plus="seed"'], "tcp.ecn_plus (seed) needs ecn = true"),
        (["tcp.abe=true"], "tcp.abe (true) needs ecn = true"),
        (['tcp.ecn_feedback="accecn"'], "tcp.ecn_feedback (accecn) needs ecn = true"),
        (["tcp.ecn=true", "tcp.ect_syn=true"], 'tcp.ect_syn (true) needs ecn_feedback = "accecn"'),
        (
            ["tcp.ecn=true", "tcp.ecn_plus_plus=true"],
            'tcp.ecn_plus_plus (true) needs ecn_feedback = "accecn"',
        ),
        (
            ["tcp.ecn=true", "tcp.ect_pure_acks=true"],
            'tcp.ect_pure_acks (true) needs ecn_feedback = "accecn"',
        ),
        (["tcp.ect_fins=true"], "tcp.ect_fins (true) needs ecn = true"),
        (
            ["tcp.ecn=true", 'tcp.accecn_option="full"'],
            'tcp.accecn_option (full) applies only with ecn_feedback = "accecn"',
        ),
        (
            ["tcp.ecn=true", 'tcp.ecn_feedback="accecn"', 'tcp.ecn_response="ns2"'],
            'tcp.ecn_response (ns2) ns-2\'s FullTcp response answers RFC 3168\'s echo',
        ),
        (["tcp.ecn=true", "tcp.clients={ecn=false}", 'tcp.ecn_plus="rfc5562"'], "tcp.ecn_plus"),
        (["workloads.0.tcp={abe=true}"], "workloads[0].tcp.abe (true) needs ecn = true"),
        (
            ["topology.bottleneck.queue.limit_bytes=10"],
            "topology.bottleneck.queue.limit_bytes (10) must hold a full-size segment (1500",
        ),
        (
            ['topology.bottleneck.queue.aqm={kind="pi", q_ref_pkts=300}'],
            (
                "topology.bottleneck.queue.aqm.q_ref_pkts (300) must be below the queue's "
                "limit_pkts (100)"
            ),
        ),
        (
            ['topology.bottleneck.queue.aqm={kind="red", min_th_pkts=150, max_th_pkts=300}'],
            "aqm.min_th_pkts (150) must be below the queue's limit_pkts (100)",
        ),
    ],
)
def test_07_nonsense_combinations_are_refused(overrides: list[str], named: str) -> None:
    args = [a for o in overrides for a in ("--set", o)]
    assert_one_line_error(invoke("validate", BULK, *args), named)


def test_07_the_same_options_with_ecn_are_accepted() -> None:
    for overrides in (
        ["tcp.ecn=true", 'tcp.ecn_plus="seed"', "tcp.abe=true"],
        ['tcp.ecn_plus="seed"', "tcp.clients={ecn_fraction=0.5}", "tcp.servers={ecn=true}"],
        ["workloads.0.tcp={ecn=true, abe=true}"],
        ["tcp.ecn=true", 'tcp.ecn_feedback="accecn"', 'tcp.accecn_option="minimum"'],
        ["tcp.ecn=true", 'tcp.ecn_feedback="accecn"', "tcp.ecn_plus_plus=true"],
        ["tcp.ecn=true", "tcp.ect_fins=true"],
        ['tcp.servers={ecn=true, ecn_feedback="accecn"}', "tcp.clients={ecn=true}"],
    ):
        args = [a for o in overrides for a in ("--set", o)]
        assert invoke("validate", BULK, *args).exit_code == 0, overrides


# --- 8. endless input ------------------------------------------------------------------------


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_08_validate_dev_zero_reads_a_bounded_amount() -> None:
    assert_one_line_error(invoke("validate", "/dev/zero"), "/dev/zero: larger than 16 MiB")


# --- 9. damaged stored runs ----------------------------------------------------------------


def _damage(run_dirs: list[Path]) -> dict[str, str]:
    """Four kinds of damage, one per run: what each run should be reported for."""
    a, b, c, d = run_dirs
    flows = a / "flows.parquet"
    flows.write_bytes(flows.read_bytes()[: flows.stat().st_size // 2])  # truncated
    (b / "manifest.json").write_text("{garbage")  # garbage manifest
    (c / "links.parquet").unlink()  # deleted table
    data = bytearray((d / "exchanges.parquet").read_bytes())  # random bytes mid-file
    middle = len(data) // 2
    data[middle : middle + 8] = random.Random(9).randbytes(8)
    (d / "exchanges.parquet").write_bytes(bytes(data))
    return {
        a.name: "flows.parquet:",
        b.name: "manifest.json is corrupt",
        c.name: "links.parquet: missing",
        d.name: "exchanges.parquet: content differs",
    }


def test_09_damaged_runs_are_all_reported_and_recomputed(tmp_path: Path) -> None:
    path, out = _sweep(tmp_path), tmp_path / "out"
    assert invoke("sweep", str(path), "--out", str(out), "--jobs", "1", "--quiet").exit_code == 0
    runs = sorted((out / "runs").iterdir())
    before = {p.name: ecnlab.read_run(p).tables for p in runs}
    expected = _damage(runs)

    # verify lists every damaged run at once, and exits 1.
    result = invoke("verify", str(out))
    assert result.exit_code == 1, result.output
    for rid, problem in expected.items():
        line = next(x for x in result.stdout.splitlines() if rid in x)
        assert line.startswith("damaged") and problem in line, line
    assert "4 of 4 runs damaged" in result.stderr
    # query and report refuse, naming how many are damaged; nothing is read from them.
    for args in (["query", str(out), "SELECT count(*) FROM flows"], ["report", str(out)]):
        result = invoke(*args)
        assert result.exit_code == 1, result.output
        assert "4 of 4 runs damaged" in result.stderr
        assert "\n" not in result.stderr.strip()
    with pytest.raises(store.CorruptRunError, match="4 of 4 runs damaged"):
        ecnlab.open_results(out)

    # Resuming sets the damaged runs aside and computes them again, identically.
    report = sweep_mod.run_sweep(path, out, jobs=1, progress=False)
    assert (report.damaged, report.done, report.skipped) == (4, 4, 0)
    assert sorted(p.name.split("-")[0] for p in (out / "damaged").iterdir()) == sorted(expected)
    assert invoke("verify", str(out)).exit_code == 0
    for p in runs:
        assert_tables_identical(ecnlab.read_run(p).tables, before[p.name])


def test_09_a_single_run_folder_is_verified_too(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", BULK, "--out", str(out), "-q", "--set", "duration_s=1", "--set", "warmup_s=0"]
    assert invoke(*args).exit_code == 0
    assert invoke("verify", str(out)).exit_code == 0
    flows = out / "flows.parquet"
    flows.write_bytes(flows.read_bytes() + b"x")
    result = invoke("verify", str(out))
    assert result.exit_code == 1
    assert "flows.parquet: " in result.stdout and "bytes, the manifest says" in result.stdout
    with pytest.raises(store.CorruptRunError, match="flows.parquet"):
        ecnlab.read_run(out)


# --- 10. a changed sweep definition ---------------------------------------------------------


def test_10_a_changed_definition_is_refused_unless_replaced(tmp_path: Path) -> None:
    path, out = _sweep(tmp_path), tmp_path / "out"
    assert invoke("sweep", str(path), "--out", str(out), "--jobs", "1", "-q").exit_code == 0
    first = sorted(p.name for p in (out / "runs").iterdir())
    changed = _sweep(tmp_path, SMALL_SWEEP.replace("duration_s = 1", "duration_s = 1.5"))
    result = invoke("sweep", str(changed), "--out", str(out), "--jobs", "1", "-q")
    assert_one_line_error(
        result, "holds this sweep with another definition", "buffer=small", "--new-definition"
    )
    assert sorted(p.name for p in (out / "runs").iterdir()) == first
    # More seeds of the same definition are welcome.
    more = _sweep(tmp_path, SMALL_SWEEP.replace("seeds = [1, 2]", "seeds = [1, 2, 3]"), "m.toml")
    assert invoke("sweep", str(more), "--out", str(out), "--jobs", "1", "-q").exit_code == 0
    # Told to, the folder takes the new definition; runs of the old one are set aside.
    args = ["sweep", str(changed), "--out", str(out), "--jobs", "1", "-q", "--new-definition"]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert "6 runs of the earlier definition moved to superseded/" in result.stderr
    con = ecnlab.open_results(out)
    assert con.execute("SELECT count(*), min(duration_s) FROM runs").fetchone() == (4, 1.5)
    recorded = json.loads((out / "sweep.json").read_text())
    assert recorded["definition"]["set"]["duration_s"] == 1.5
    assert recorded["base_scenario"]["name"] == "dumbbell-bulk"


# --- 11. queries confined -----------------------------------------------------------------


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("small-sweep")
    out = tmp / "out"
    assert invoke("sweep", str(_sweep(tmp)), "--out", str(out), "-j", "1", "-q").exit_code == 0
    return out


def test_11_query_only_reads_and_only_inside_the_folder(small_sweep: Path, tmp_path: Path) -> None:
    outside = tmp_path / "copied.csv"
    inside = small_sweep / "copied.csv"
    for sql, fragment in (
        (f"COPY (SELECT 1) TO '{outside}'", "COPY statements are not allowed"),
        (f"COPY (SELECT 1) TO '{inside}'", "COPY statements are not allowed"),
        (f"ATTACH '{tmp_path / 'db.duckdb'}'", "ATTACH statements are not allowed"),
        ("INSTALL httpfs", "statements are not allowed"),
        ("SET enable_external_access = true", "SET statements are not allowed"),
        ("SELECT * FROM read_text('/etc/passwd')", "Permission Error"),
        ("SELECT * FROM read_csv('/etc/hostname')", "Permission Error"),
        ("SELECT 1; COPY (SELECT 1) TO 'x.csv'", "COPY statements are not allowed"),
    ):
        result = invoke("query", str(small_sweep), sql)
        assert_one_line_error(result, fragment)
    assert not outside.exists() and not inside.exists()
    assert not (tmp_path / "db.duckdb").exists()
    # Reading inside the folder works, views and files alike.
    result = invoke("query", str(small_sweep), "SELECT count(*) AS n FROM runs", "--csv")
    assert result.stdout == "n\n4\n"
    sql = f"SELECT count(*) AS n FROM read_text('{small_sweep / 'sweep.json'}')"
    assert invoke("query", str(small_sweep), sql, "--csv").stdout == "n\n1\n"
    # --full-access is the old, unconfined behaviour.
    sql = f"COPY (SELECT 1 AS x) TO '{outside}'"
    assert invoke("query", str(small_sweep), sql, "--full-access").exit_code == 0
    assert outside.read_text() == "x\n1\n"


# --- 12. labels as math text --------------------------------------------------------------


def test_12_labels_with_dollar_signs_are_drawn_as_written(tmp_path: Path) -> None:
    text = SMALL_SWEEP.replace(
        'labels = ["small", "large"]', 'labels = ["$\\\\nosuchcmd{$", "$x$"]'
    )
    out = tmp_path / "out"
    assert invoke("sweep", str(_sweep(tmp_path, text)), "--out", str(out), "-q").exit_code == 0
    for kind in ("cdf", "goodput", "queue"):
        result = invoke(
            "plot", str(out), "--kind", kind, "--by", "buffer", "-o", str(tmp_path / f"{kind}.png")
        )
        assert result.exit_code == 0, result.output
    assert invoke("report", str(out)).exit_code == 0
    html = (out / "report.html").read_text()
    assert "could not draw" not in html.lower() and html.count("<img") >= 3


# --- 13. the Python API --------------------------------------------------------------------


def test_13_python_api_misuse_gives_clear_errors(tmp_path: Path) -> None:
    small = ecnlab.load_scenario(BULK, ["duration_s=0.5", "warmup_s=0"])
    with pytest.raises(TypeError, match=r"overrides must be 'path=value' strings; 5 is a int"):
        ecnlab.load_scenario(small, overrides=[5])  # type: ignore[list-item]
    with pytest.raises(
        TypeError, match="overrides must be a list of 'path=value' strings, not int"
    ):
        ecnlab.load_scenario(small, overrides=5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"chunk_s \(1e-12\) must be at least 0.001"):
        ecnlab.run(small, chunk_s=1e-12, progress=False)
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(5000):
        node["x"] = {}
        node = node["x"]
    with pytest.raises(ValueError, match=r"^x\.x\.x.*nested deeper than 64"):
        ecnlab.load_scenario(deep)
    with pytest.raises(ValueError, match=r"scenario: nested deeper|nested deeper"):
        ecnlab.run({**small, "name": deep}, progress=False)
    with pytest.raises(ValueError, match=r"workloads\[0\]\.flows \(\{1, 2\}\) must be a number"):
        ecnlab.run({**small, "workloads": [{"kind": "bulk", "flows": {1, 2}}]}, progress=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="is not a results folder"):
        ecnlab.open_results(empty)


def test_13_numpy_values_are_plain_numbers() -> None:
    small = ecnlab.load_scenario(BULK, ["duration_s=0.5", "warmup_s=0"])
    with_numpy = ecnlab.load_scenario(
        {
            **small,
            "duration_s": np.float64(0.5),
            "workloads": [{**small["workloads"][0], "flows": np.int64(10)}],
            "tcp": {"ecn": np.bool_(False)},
        }
    )
    plain = ecnlab.load_scenario({**small, "tcp": {"ecn": False}})
    a = ecnlab.run(with_numpy, progress=False)
    b = ecnlab.run(plain, progress=False)
    assert a.run_id == b.run_id
    assert_tables_identical(a.tables, b.tables)


# --- 14. a killed write -------------------------------------------------------------------


def test_14_a_killed_writes_leftover_is_removed_by_the_next_write(tmp_path: Path) -> None:
    out = tmp_path / "run"
    code = f"""
import time, ecnlab, ecnlab.store as st
written = st._write_contents
def slow(result, folder):
    written(result, folder)
    print("written", flush=True)
    time.sleep(600)
st._write_contents = slow
r = ecnlab.run(ecnlab.load_scenario({BULK!r}, ["duration_s=0.5", "warmup_s=0"]), progress=False)
st.write_run(r, {str(out)!r})
"""
    proc = _python(code)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "written", proc.communicate()
    leftovers = list(tmp_path.glob(".run.tmp-*"))
    assert len(leftovers) == 1 and any(leftovers[0].iterdir())
    # While its writer lives, a leftover is left alone...
    result = ecnlab.run(
        ecnlab.load_scenario(BULK, ["duration_s=0.5", "warmup_s=0"]), progress=False
    )
    assert store._remove_abandoned(tmp_path, "run") == []
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    # ...and once it is dead, the next write beside it removes it.
    store.write_run(result, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    assert invoke("verify", str(out)).exit_code == 0


# --- 15. a full disk ---------------------------------------------------------------------


def _file_size_limit(limit: int) -> Any:
    def apply() -> None:
        # A write past the limit fails with EFBIG, as a full disk fails with ENOSPC.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_FSIZE"), reason="needs RLIMIT_FSIZE")
def test_15_a_sweep_that_cannot_write_exits_1_not_2(tmp_path: Path) -> None:
    path, out = _sweep(tmp_path), tmp_path / "out"
    code = (
        "import sys; from ecnlab.cli import app; "
        f"sys.argv = ['ecnlab', 'sweep', {str(path)!r}, '--out', {str(out)!r}, '-j', '1', '-q']; "
        "app()"
    )
    proc = _python(code, limits=_file_size_limit(1000))
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stderr
    assert stderr.startswith("error:") and "Traceback" not in stderr, stderr
    assert "File too large" in stderr or "No space" in stderr, stderr
    # The same for a single run whose results cannot be written.
    code = code.replace("'sweep', " + repr(str(path)), "'run', " + repr(BULK)).replace(
        "'-j', '1', ", "'--set', 'duration_s=1', '--set', 'warmup_s=0', "
    )
    proc = _python(
        code.replace(repr(str(out)), repr(str(tmp_path / "one"))), limits=_file_size_limit(1000)
    )
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1, stderr
    assert "cannot write the run" in stderr and "Traceback" not in stderr, stderr
    shutil.rmtree(out, ignore_errors=True)


def test_the_example_scenarios_stay_valid_and_within_their_estimate() -> None:
    for file in sorted(EXAMPLES.glob("*.toml")) + sorted(
        (ROOT / "python" / "ecnlab" / "reproduce" / "data").glob("*/*.toml")
    ):
        scenario = ecnlab.load_scenario(file)
        _core.check_budget(json.dumps(scenario), 4e9)
